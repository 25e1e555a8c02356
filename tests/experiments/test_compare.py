"""quadrat-bench: any policy on the held-out deals, paired against greedy and the planner."""

from __future__ import annotations

import csv
import json

import pytest
from quadrat_env.experiments import compare
from quadrat_env.experiments.publish import MODELS


def test_mcnemar_exact_p_values():
    assert compare.mcnemar(0, 0) == 1.0 and compare.mcnemar(5, 5) == 1.0
    assert compare.mcnemar(10, 0) == pytest.approx(2 / 1024)
    assert compare.mcnemar(1, 9) == pytest.approx(2 * 11 / 1024)
    # 2,666 against 510 deals: below the floats' range, written as such, never "p = 0"
    assert compare.mcnemar(2666, 510) == 0.0 and compare.p_text(0.0) == "< 1e-300"
    assert compare.p_text(compare.mcnemar(1, 9)) == "= 0.0215"


def test_a_factory_agent_against_both_baselines(tmp_path, capsys):
    assert compare.main(["--env", "Zudecken", "--agent", "bench_factory:make", "--deals", "25",
                       "--baselines", "greedy", "planner", "--out", str(tmp_path),
                       "--no-progress"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "| random | 25 |" in out and "against greedy:" in out and "McNemar p =" in out
    result = json.loads((tmp_path / "bench.json").read_text())
    assert [r["agent"] for r in result["rows"]] == ["random", "greedy", "planner"]
    with (tmp_path / "random.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["seed", "won", "cards_left", "steps", "illegal_actions"]
    assert [int(r["seed"]) for r in rows] == list(range(10**9, 10**9 + 25))
    paired = result["paired"][0]
    greedy_wins = sum(int(r["won"]) for r in csv.DictReader((tmp_path / "greedy.csv").open()))
    mine = sum(int(r["won"]) for r in rows)
    assert mine - greedy_wins == paired["only_agent_won"] - paired["only_baseline_won"]


def test_greedy_is_the_default_baseline(tmp_path):
    assert compare.parse(["--env", "Zudecken", "--agent", "hand", "--out", str(tmp_path)])[0].baselines == [
        "greedy"
    ]


def test_an_earlier_benchmark_is_kept_unless_overwrite(tmp_path, capsys):
    def bench(deals: int, *more: str) -> int:
        return compare.main(["--env", "Quadrat", "--agent", "greedy", "--baselines", "--no-progress",
                             "--deals", str(deals), "--out", str(tmp_path), *more])  # fmt: skip

    assert bench(3) == 0
    before = (tmp_path / "bench.json").read_bytes()
    with pytest.raises(SystemExit) as stop:
        bench(4)
    assert stop.value.code == 2 and "--overwrite" in capsys.readouterr().err
    assert (tmp_path / "bench.json").read_bytes() == before
    assert bench(4, "--overwrite") == 0
    assert json.loads((tmp_path / "bench.json").read_text())["deals"] == 4


def test_a_model_file(tmp_path, capsys):
    model = str(MODELS / "Quadrille-maskable_ppo.zip")
    assert (
        compare.main(
            [
                "--env",
                "quadrat_env/Quadrille-v0",
                "--model",
                model,
                "--algo",
                "maskable_ppo",
                "--deals",
                "5",
                "--baselines",
                "greedy",
                "--out",
                str(tmp_path),
                "--no-progress",
            ]
        )
        == 0
    )
    assert (tmp_path / "Quadrille-maskable_ppo.csv").is_file()


def test_a_model_plays_in_the_benchmarks_batches_unless_told(tmp_path, monkeypatch, capsys):
    """The benchmark's table and quadrat-bench play a model in batches of the same size, so a shipped
    model wins the same deals in both (a network's near ties can fall the other way in another)."""
    from quadrat_env.experiments.benchmark import MODEL_BATCH

    seen, evaluate = [], compare.evaluate
    monkeypatch.setattr(compare, "evaluate", lambda *a, **kw: seen.append(kw["n_envs"]) or evaluate(*a, **kw))
    model = str(MODELS / "Quadrille-maskable_ppo.zip")
    for batch, out in ((None, "default"), ("3", "three")):
        more = ["--batch", batch] if batch else []
        argv = ["--env", "Quadrille", "--model", model, "--deals", "5", "--no-progress", "--no-optimum"]
        assert compare.main([*argv, *more, "--out", str(tmp_path / out)]) == 0
    assert seen == [MODEL_BATCH, compare.AGENT_BATCH, 3, compare.AGENT_BATCH]  # the model, then greedy
    assert json.loads((tmp_path / "three" / "bench.json").read_text())["model_batch"] == 3
    assert "the model played 3 deals side by side" in (tmp_path / "three" / "bench.md").read_text()


@pytest.mark.parametrize(("argv", "message"), [
    (["--env", "Solitaire", "--agent", "greedy"], "unknown env"),
    (["--env", "Zudecken", "--agent", "nosuchmodule:make"], "cannot load it"),
    (["--env", "Zudecken", "--agent", "bench_factory:not_an_agent"], "no predict"),
    (["--env", "Zudecken", "--agent", "clever"], "module:factory"),
    (["--env", "Zudecken", "--model", "/nonexistent.zip", "--algo", "ppo"], "no saved model"),
    (["--env", "Zudecken", "--model", "x.zip"], "no saved model at x.zip"),
    (["--env", "Quadrat", "--model", str(MODELS / "Zudecken-ppo.zip"), "--algo", "ppo"], "another env"),
    (["--env", "Zudecken", "--agent", "greedy", "--deals", "0"], "must be >= 1"),
    (["--env", "Zudecken", "--agent", "greedy", "--batch", "0"], "must be >= 1"),
    (["--env", "Zudecken", "--agent", "greedy", "--out", __file__], "is a file"),
    (["--env", "Zudecken", "--agent", "greedy", "--baselines", "optimal"], "no exact policy"),
])  # fmt: skip
def test_bad_arguments_get_one_line_and_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        compare.main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and message in err and "Traceback" not in err


def test_parallel_jobs_give_the_same_table_and_a_shipped_model_goes_by_name(tmp_path, capsys):
    argv = ["--env", "Quadrat", "--model", "Quadrat-maskable_ppo", "--algo", "maskable_ppo", "--deals", "30",
            "--baselines", "greedy", "--no-progress"]  # fmt: skip
    assert compare.main([*argv, "--out", str(tmp_path / "one")]) == 0
    assert compare.main([*argv, "--out", str(tmp_path / "two"), "--jobs", "2"]) == 0
    for name in ("Quadrat-maskable_ppo.csv", "greedy.csv"):
        assert (tmp_path / "one" / name).read_text() == (tmp_path / "two" / name).read_text()


def test_two_runs_models_named_model_zip_keep_separate_csvs(tmp_path, capsys):
    for run in ("Quadrat-seed1", "Quadrat-seed2"):
        (tmp_path / run).mkdir()
        (tmp_path / run / "model.zip").write_bytes((MODELS / "Quadrat-maskable_ppo.zip").read_bytes())
        assert compare.main(["--env", "Quadrat", "--model", str(tmp_path / run / "model.zip"), "--algo",
                           "maskable_ppo", "--deals", "3", "--baselines", "--no-progress",
                           "--out", str(tmp_path / "out" / run)]) == 0  # fmt: skip
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.csv")) == [
        "Quadrat-seed1/Quadrat-seed1-model.csv", "Quadrat-seed2/Quadrat-seed2-model.csv"]  # fmt: skip


def test_rows_show_their_share_of_the_exact_optimum_where_it_is_known():
    from quadrat_env.agents.evaluate import Summary

    row = Summary("quadrat_env/Zudecken32-v0", "mine", 100, 50, 0.5, 0.4, 0.6, 3.0, 0.0, 1.0)
    assert "| 80.0% |" in compare.row_line(row, optimum=0.625)
    assert "| – |" in compare.row_line(row, optimum=None)
    from quadrat_env.experiments.common.studies import exact_optima

    # 52 cards: the exact search's committed value, once computed
    zu = "quadrat_env/Zudecken-v0"
    assert abs(compare.exact_optimum(zu) - exact_optima()[zu]) < 1e-11
    # every rung of the ladder: the exact solver's record, read, not solved again
    assert 0.9756 < compare.exact_optimum("quadrat_env/Zudecken16-v0") < 0.9757
    assert 0.5324 < compare.exact_optimum("quadrat_env/Zudecken36-v0") < 0.5325
    assert compare.exact_optimum("quadrat_env/Quadrat-v0") is None


def test_the_same_command_twice_writes_two_new_folders(tmp_path, monkeypatch, capsys):
    """No --out: a new folder under runs/bench each run, so the docs' examples run one after another."""
    monkeypatch.chdir(tmp_path)
    argv = [
        "--env",
        "Quadrat",
        "--agent",
        "greedy",
        "--baselines",
        "--deals",
        "3",
        "--no-progress",
        "--no-optimum",
    ]
    assert compare.main(argv) == 0 and compare.main(argv) == 0
    runs = sorted((tmp_path / "runs" / "bench").iterdir())
    assert len(runs) == 2 and all((run / "bench.json").is_file() for run in runs)
    assert all(run.name.startswith("Quadrat-") for run in runs)


def test_a_missing_model_lists_the_shipped_ones(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        compare.main(["--env", "Zudecken32", "--model", "Zudecken32-nope", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "the models shipped for Zudecken32: " in err and "Zudecken32-rl" in err


def test_overwrite_replaces_the_earlier_benchmark_only_when_the_new_one_is_whole(tmp_path, monkeypatch):
    """Ctrl-C while the new deals are played leaves the earlier benchmark as it was; a finished
    overwrite replaces it, and the earlier run's CSV of an agent not played now goes with it."""
    base = ["--env", "Zudecken32", "--deals", "20", "--out", str(tmp_path), "--no-progress", "--no-optimum"]
    assert compare.main([*base, "--agent", "random", "--baselines", "greedy"]) == 0
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert "greedy.csv" in before
    real = compare.evaluate

    def stopped(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise KeyboardInterrupt

    monkeypatch.setattr(compare, "evaluate", stopped)
    assert compare.main([*base, "--agent", "greedy", "--baselines", "--overwrite"]) == 130
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name in before} == before
    monkeypatch.setattr(compare, "evaluate", real)
    assert compare.main([*base, "--agent", "greedy", "--baselines", "--overwrite"]) == 0
    assert not (tmp_path / "random.csv").exists() and (tmp_path / "greedy.csv").is_file()
    assert [r["agent"] for r in json.loads((tmp_path / "bench.json").read_text())["rows"]] == ["greedy"]
