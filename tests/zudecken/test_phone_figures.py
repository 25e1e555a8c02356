"""The Zudecken study's figures read on a phone (``plots.SMALLEST_TEXT_PX``; the fixture ``drawn``
is in ``tests/conftest.py``)."""

from __future__ import annotations

import json
from pathlib import Path

from quadrat_env.experiments.common import plots
from quadrat_env.experiments.zudecken import headline, ladder_curves, ladder_table
from quadrat_env.experiments.zudecken.td_curves import GAMES, optima

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"


def test_the_share_and_td_figures_read_on_a_phone(tmp_path, drawn):
    headline.share_figure(json.loads((RESULTS / "benchmark.json").read_text()), tmp_path / "share.png")
    configs = ROOT / "experiments" / "models" / "configs"
    curves = {g: sorted(configs.glob(f"{g}-rl-seed*-curve.csv")) for g in GAMES}
    plots.seed_curves(curves, tmp_path / "td_curves.png", optima(RESULTS / "benchmark.json"))
    assert len(drawn) == 2 and min(drawn) >= plots.SMALLEST_TEXT_PX, drawn


def test_the_ladder_figures_read_on_a_phone(drawn):
    result = json.loads((RESULTS / "ladder.json").read_text())
    rows = ladder_table.summary(result)
    assert ladder_table.figure(result, rows)[:4] == b"\x89PNG"
    assert ladder_curves.figure(result, rows)[:4] == b"\x89PNG"
    assert len(drawn) == 2 and min(drawn) >= plots.SMALLEST_TEXT_PX, drawn
