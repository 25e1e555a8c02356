"""Every figure the docs show is readable on a phone: its smallest text at least
``plots.SMALLEST_TEXT_PX`` CSS px once the phone shrinks it to the docs' column."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from quadrat_env.experiments.common import plots

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"


def benchmark() -> dict:
    return json.loads((RESULTS / "benchmark.json").read_text())


def test_the_win_rate_figure_reads_on_a_phone(tmp_path, drawn):
    plots.win_rates(benchmark(), tmp_path / "win_rates.png")
    assert len(drawn) == 1 and min(drawn) >= plots.SMALLEST_TEXT_PX, drawn
    assert (tmp_path / "win_rates.png").stat().st_size > 0


def test_small_text_is_measured_as_a_phone_shows_it():
    """The old figures' size: 6.4 in wide with 7-point legends is 5.4 px on a phone, and warns."""
    fig, ax = plots.plt.subplots(figsize=(6.4, 3))
    ax.plot([0, 1], label="a curve")
    ax.legend(fontsize=7)
    ax.set_xlabel("moves", fontsize=10)
    assert plots.smallest_text_px(fig) == pytest.approx(7 / 72 * 358 / 6.4)
    with pytest.warns(plots.SmallText, match="5.4 px"):
        plots.png(fig)
    narrow, ax = plots.plt.subplots(figsize=(2.0, 2.0))  # not shrunk: its points at the dpi
    ax.set_title("x", fontsize=10)
    assert plots.smallest_text_px(narrow) == pytest.approx(10 / 72 * plots.DPI)
    plots.plt.close(narrow)
