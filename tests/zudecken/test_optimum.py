"""The bracket command: the planner from below, the one-level bound from above, checked against the
exact optimum where it is known."""

from __future__ import annotations

import json
from functools import partial

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
    wins = partial(optimum._planner_wins, optimum.ZU)
    one = optimum._values("planner", wins, deals, 1, log, False)
    two = optimum._values("planner", wins, deals, 2, [], False)
    assert (one == two).all() and set(one) <= {0.0, 1.0}
    assert len(log) == 2 and log[0].startswith("planner: 3/6 deals") and log[1].startswith("planner: 6/6")


def test_out_naming_a_file_is_one_line(tmp_path, capsys):
    (tmp_path / "f").write_text("keep")
    with pytest.raises(SystemExit) as exc:
        optimum.main(["--out", str(tmp_path / "f")])
    assert exc.value.code == 2 and "is a file" in capsys.readouterr().err
    assert (tmp_path / "f").read_text() == "keep"


SMALL = ["--deals", "12", "--bound-deals", "6", "--bound-samples", "16"]


def test_a_new_bracket_keeps_the_computed_optimum_and_checks_itself_against_it(tmp_path, capsys):
    solve = {"value": 0.3, "positions": 7, "log": "results/zudecken_exact.log"}
    (tmp_path / "zudecken_optimum.json").write_text(json.dumps({"exact": 0.3, "exact_solve": solve}))
    assert optimum.main([*SMALL, "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "zudecken_optimum.json").read_text())
    assert result["exact"] == 0.3 and result["exact_solve"] == solve
    holds = result["lower"] <= 0.3 <= result["upper"]
    out = capsys.readouterr().out
    assert ("the bracket holds the exact optimum 30.00%" in out) == holds
    assert f"the upper end {(result['upper'] - 0.3) * 100:.1f} points above it" in out


def test_the_32_card_bracket_reads_its_exact_optimum_from_the_exact_values(tmp_path, capsys):
    ranks = {"8": {"value": 0.622902040094}, "13": {"value": 0.274136841737}}
    (tmp_path / "zudecken_exact.json").write_text(json.dumps({"ranks": ranks}))
    assert optimum.main([*SMALL, "--env", "quadrat_env/Zudecken32-v0", "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "zudecken32_optimum.json").read_text())
    assert result["env_id"] == "quadrat_env/Zudecken32-v0" and result["exact"] == 0.622902040094
    assert not (tmp_path / "zudecken_optimum.json").exists()
    assert (tmp_path / "zudecken32_optimum.log").read_text().splitlines()[-1].startswith("Zudecken32-v0")
    assert "exact optimum 62.29%" in capsys.readouterr().out


@pytest.mark.parametrize("bad", ['{"exact": "0.3"}', '{"exact": 1.5}', "not json", '["exact"]'])
def test_a_bad_results_file_is_one_line_before_any_work_and_stays_as_it_was(tmp_path, capsys, bad):
    (tmp_path / "zudecken_optimum.json").write_text(bad)
    with pytest.raises(SystemExit) as exc:
        optimum.main([*SMALL, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "zudecken_optimum.json" in err.strip().splitlines()[-1]
    assert (tmp_path / "zudecken_optimum.json").read_text() == bad
    assert not (tmp_path / "zudecken_optimum.log").exists()
