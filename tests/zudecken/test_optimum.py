"""The 52-card bracket command: the planner from below, the one-level bound from above."""

from __future__ import annotations

import json

import pytest
from quadrat_env.experiments.zudecken import optimum


def test_a_small_bracket_is_written_with_its_log(tmp_path, capsys):
    argv = ["--deals", "12", "--bound-deals", "6", "--bound-samples", "16", "--out", str(tmp_path)]
    assert optimum.main(argv) == 0
    result = json.loads((tmp_path / "zudecken_optimum.json").read_text())
    planner, bound = result["planner"], result["one_level_bound"]
    assert result["exact"] is None and planner["deals"] == 12 and bound["deals"] == 6
    assert result["lower"] == planner["ci95"][0] <= planner["win_rate"]
    assert result["upper"] == min(1.0, bound["ci95"][1]) >= bound["mean"]
    log = (tmp_path / "zudecken_optimum.log").read_text().splitlines()
    assert log[0].startswith("python -m quadrat_env.experiments.zudecken.optimum") and "between" in log[-1]
    assert "between" in capsys.readouterr().out


def test_the_values_do_not_depend_on_the_number_of_processes(monkeypatch):
    monkeypatch.setattr(optimum, "CHUNK", 3)  # two chunks, each with its own planner generator
    deals, log = range(10**9, 10**9 + 6), []
    one = optimum._values("planner", optimum._planner_wins, deals, 1, log, False)
    two = optimum._values("planner", optimum._planner_wins, deals, 2, [], False)
    assert (one == two).all() and set(one) <= {0.0, 1.0}
    assert len(log) == 2 and log[0].startswith("planner: 3/6 deals") and log[1].startswith("planner: 6/6")


def test_out_naming_a_file_is_one_line(tmp_path, capsys):
    (tmp_path / "f").write_text("keep")
    with pytest.raises(SystemExit) as exc:
        optimum.main(["--out", str(tmp_path / "f")])
    assert exc.value.code == 2 and "is a file" in capsys.readouterr().err
    assert (tmp_path / "f").read_text() == "keep"
