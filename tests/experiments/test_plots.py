"""Every figure the docs show is readable on a phone: its smallest text at least
``plots.SMALLEST_TEXT_PX`` CSS px once the phone shrinks it to the docs' column."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from quadrat_env.experiments.common import plots
from quadrat_env.experiments.zudecken import headline, ladder_curves, ladder_table
from quadrat_env.experiments.zudecken.td_curves import GAMES, optima

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"


@pytest.fixture
def drawn(monkeypatch):
    """The smallest text (phone px) of every figure drawn in the test, by ``plots.png``."""
    sizes: list[float] = []
    png = plots.png

    def measured(fig, dpi=plots.DPI):  # noqa: ANN001, ANN202
        sizes.append(plots.smallest_text_px(fig, dpi))
        return png(fig, dpi)

    monkeypatch.setattr(plots, "png", measured)
    with warnings.catch_warnings():
        warnings.simplefilter("error", plots.SmallText)
        yield sizes


def benchmark() -> dict:
    return json.loads((RESULTS / "benchmark.json").read_text())


def test_the_benchmark_figures_read_on_a_phone(tmp_path, drawn):
    headline.share_figure(benchmark(), tmp_path / "share.png")
    plots.win_rates(benchmark(), tmp_path / "win_rates.png")
    configs = ROOT / "experiments" / "models" / "configs"
    curves = {g: sorted(configs.glob(f"{g}-rl-seed*-curve.csv")) for g in GAMES}
    plots.seed_curves(curves, tmp_path / "td_curves.png", optima(RESULTS / "benchmark.json"))
    assert len(drawn) == 3 and min(drawn) >= plots.SMALLEST_TEXT_PX, drawn
    assert all((tmp_path / f).stat().st_size > 0 for f in ("share.png", "win_rates.png", "td_curves.png"))


def test_the_ladder_figures_read_on_a_phone(drawn):
    result = json.loads((RESULTS / "ladder.json").read_text())
    rows = ladder_table.summary(result)
    assert ladder_table.figure(result, rows)[:4] == b"\x89PNG"
    assert ladder_curves.figure(result, rows)[:4] == b"\x89PNG"
    assert len(drawn) == 2 and min(drawn) >= plots.SMALLEST_TEXT_PX, drawn


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
