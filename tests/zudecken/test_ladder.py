"""The Zudecken ladder command: rungs from the registry, optima from the exact record, cells kept and
reused, the benchmark's rows for rungs 8 and 13, one line and exit 2 on bad input."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("rliable")

from quadrat_env.experiments.zudecken import ladder  # noqa: E402
from quadrat_env.experiments.zudecken.ladder_table import rate_table, summary  # noqa: E402


def test_every_rung_is_registered_and_has_its_exact_optimum():
    rungs = ladder.rungs()
    assert list(rungs) == list(range(4, 14))
    assert rungs[8] == "quadrat_env/Zudecken32-v0" and rungs[13] == "quadrat_env/Zudecken-v0"
    record = json.loads((ladder.RESULTS / "zudecken_exact.json").read_text())["ranks"]
    for r in rungs:
        assert ladder.optimum(r) == float.fromhex(record[str(r)]["hex"])
        assert abs(ladder.optimum(r) - record[str(r)]["value"]) < 1e-11
    assert ladder.optimum(8) > ladder.optimum(9) > ladder.optimum(13)


def test_a_bad_exact_record_is_named(tmp_path):
    (tmp_path / "x.json").write_text('{"ranks": {"4": {"hex": "0x1.8p+1"}}}')
    with pytest.raises(ValueError, match="not a win rate"):
        ladder.optimum(4, tmp_path / "x.json")
    with pytest.raises(ValueError, match="no readable optimum for 5 ranks"):
        ladder.optimum(5, tmp_path / "x.json")


def test_the_ladder_plays_keeps_and_reuses_its_cells(tmp_path, monkeypatch, capsys):
    work, out = tmp_path / "work", tmp_path / "out"
    players = ["random", "greedy", "solver", "optimal", "ppo", "td", "imitation"]  # the longest run first
    budgets = ["--td-moves", "1024", "--imitation-deals", "40", "--ppo-moves", "4096", "--seeds", "0"]
    argv = ["--ranks", "4", "4", "--players", *players, *budgets, "--deals", "60", "--work", str(work),
            "--out", str(out), "--no-progress", "--jobs", "2"]  # fmt: skip
    assert ladder.main(argv) == 0
    result = json.loads((out / "ladder.json").read_text())
    mine = {c["player"]: c for c in result["cells"] if c["ranks"] == 4}
    assert set(mine) == set(players)
    assert all(c["episodes"] == 60 and 0 <= c["win_rate"] <= 1 for c in mine.values())
    assert mine["td"]["moves"] == 1024 and mine["td"]["learned_from"] == "the reward"
    assert mine["imitation"]["deals_labelled"] == 40 and mine["imitation"]["learned_from"] == "exact values"
    assert [mine["ppo"][k] for k in ("moves", "learned_from", "network")] == [4096, "the reward", "mlp 64x64"]
    # the optimal policy wins about the optimum (97.6% with 4 ranks), greedy far less
    assert mine["optimal"]["wins"] >= 52 > mine["greedy"]["wins"]
    # rungs 8 and 13: the benchmark's rows, TD(0) with its committed budget
    rows = summary(result)
    assert rows[8, "td"]["seeds"] == 3 and rows[8, "td"]["budget"] == ["60M moves"]
    assert rows[8, "imitation"]["seeds"] == 3 and rows[8, "imitation"]["budget"] == ["60k deals labelled"]
    assert (13, "imitation") not in rows  # 52 cards: MaskablePPO imitated the solver, not exact values
    assert rows[8, "ppo"]["seeds"] == rows[13, "ppo"]["seeds"] == 10  # the benchmark's JAX PPO rows
    assert rows[8, "ppo"]["budget"] == ["60M moves"] and rows[13, "ppo"]["budget"] == ["30M moves"]
    assert (8, "optimal") in rows and (13, "optimal") not in rows
    table = (out / "ladder.md").read_text()
    assert "| 4 | 16 | 97.57% |" in table and (out / "ladder.png").stat().st_size > 10_000
    # TD(0)'s cell keeps its validation curve (from the run's first move to its last) for the curves figure
    assert mine["td"]["curve"][0][0] == 0 and mine["td"]["curve"][-1][0] >= 1024
    assert all(0 <= rate <= 1 for _, rate in mine["td"]["curve"])
    assert mine["ppo"]["curve"][0][0] == 0 and mine["ppo"]["curve"][-1][0] >= 4096  # PPO's is kept too
    assert (out / "ladder_curves.png").stat().st_size > 10_000
    # a second run plays nothing: every cell asked for is kept
    monkeypatch.setattr(ladder, "play_cell", lambda *a: pytest.fail("a kept cell was played again"))
    monkeypatch.setattr(
        ladder.learners, "cell", lambda *a: pytest.fail("a kept learner's cell was played again")
    )
    monkeypatch.setattr(
        ladder.learners.subprocess, "Popen", lambda *a: pytest.fail("a kept run was trained again")
    )
    assert ladder.main(argv) == 0
    assert json.loads((out / "ladder.json").read_text())["cells"] == result["cells"]
    # and a fresh work folder still has the committed cells of --out's ladder.json
    fresh = [*budgets, "--deals", "60", "--work", str(tmp_path / "fresh"), "--out", str(out), "--tables-only"]
    assert ladder.main(fresh) == 0
    assert json.loads((out / "ladder.json").read_text())["cells"] == result["cells"]
    # a learner's cells of another budget than the ladder's now are left out of its table
    assert ladder.main([*fresh[2:], "--td-moves", "2048"]) == 0
    kept = json.loads((out / "ladder.json").read_text())["cells"]
    assert [c for c in kept if c["ranks"] == 4 and c["player"] == "td"] == []
    assert [c["player"] for c in kept if c["ranks"] == 4 and c["player"] == "imitation"] == ["imitation"]


@pytest.mark.parametrize(("argv", "message"), [
    (["--ranks", "3", "5"], "--ranks must be LOW HIGH with 4 <= LOW <= HIGH <= 13"),
    (["--ranks", "9", "5"], "--ranks must be LOW HIGH"),
    (["--deals", "0"], "--deals, --planner-deals, --jobs, --td-moves, --ppo-moves and --imitation-deals"),
    (["--ppo-moves", "0"], "must be >= 1"),
    (["--td-moves", "0"], "must be >= 1"),
    (["--seeds", "1", "1"], "--seeds must be distinct"),
    (["--players", "oracle"], "invalid choice"),
])  # fmt: skip
def test_bad_arguments_are_one_line_and_exit_2(argv, message, capsys, tmp_path):
    with pytest.raises(SystemExit) as stop:
        ladder.main([*argv, "--work", str(tmp_path), "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and message in err and "Traceback" not in err


def test_a_stopped_ladder_resumes_to_the_same_table(tmp_path, monkeypatch):
    """Ctrl-C after the first cell: one line and 130; the same command then plays only what was
    missing, and the table equals an uninterrupted run's."""
    base = ["--ranks", "4", "5", "--players", "random", "greedy", "solver", "--deals", "40", "--no-progress"]
    whole = tmp_path / "whole"
    assert ladder.main([*base, "--work", str(whole), "--out", str(whole)]) == 0
    stopped = tmp_path / "stopped"
    played = []
    real = ladder.play_cell

    def stop_after_one(*args):
        if played:
            raise KeyboardInterrupt
        played.append(args[:3])
        return real(*args)

    monkeypatch.setattr(ladder, "play_cell", stop_after_one)
    assert ladder.main([*base, "--work", str(stopped), "--out", str(stopped)]) == 130
    assert not (stopped / "ladder.json").exists() and len(list((stopped / "cells").glob("*.json"))) == 1
    monkeypatch.setattr(ladder, "play_cell", real)
    assert ladder.main([*base, "--work", str(stopped), "--out", str(stopped)]) == 0

    def wins(folder):
        cells = json.loads((folder / "ladder.json").read_text())["cells"]
        return sorted((c["env_id"], c["player"], c.get("seed"), c["wins"]) for c in cells)

    assert wins(stopped) == wins(whole)
    assert (stopped / "ladder.md").read_text().split("\n", 3)[3] == (whole / "ladder.md").read_text().split(
        "\n", 3
    )[3]


def test_a_learner_with_one_seed_so_far_shows_its_deals_interval():
    """The IQM's bootstrap over one seed is a point ([70.61%, 70.61%]): a single seed's row gives the
    interval over its deals instead, and says so; two seeds or more, the IQM's."""
    cell = {"ranks": 4, "player": "td", "win_rate": 0.9, "ci_low": 0.89, "ci_high": 0.91, "episodes": 10_000,
            "moves": 8_000_000}  # fmt: skip
    one = {"optimum": {"4": 0.9757}, "cells": [cell]}
    row = summary(one)[4, "td"]
    assert row["win_rate"] == 0.9 and row["ci"] == [0.89, 0.91] and row["seeds"] == 1
    assert "| 4 | TD(0) from the reward | 90.00% | [89.00%, 91.00%] |" in rate_table(one, summary(one))
    assert "1 (its deals' interval), 8M moves |" in rate_table(one, summary(one))
    two = {**one, "cells": [cell, {**cell, "win_rate": 0.92}]}
    low, high = summary(two)[4, "td"]["ci"]
    assert summary(two)[4, "td"]["seeds"] == 2 and 0.9 <= low < high <= 0.92
