"""A row from many seeds: rliable's IQM and interval over each seed's held-out win rate."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

pytest.importorskip("rliable")

from quadrat_env.experiments import seed_rows  # noqa: E402

Z32 = "quadrat_env/Zudecken32-v0"


def _runs(tmp_path, rates, name="Zudecken32"):  # noqa: ANN001, ANN202
    for seed, rate in enumerate(rates):
        folder = tmp_path / "td_jax" / f"{name}-seed{seed}"
        folder.mkdir(parents=True)
        (folder / "summary.json").write_text(json.dumps({"test_win_rate": rate, "test_deals": 10_000,
                                                         "moves": 10, "seconds": 1.0, "device": "cpu",
                                                         "method": "PPO", "network": "mlp",
                                                         "net_arch": [64, 64]}))  # fmt: skip
        (folder / "config.yml").write_text("seed: 0\nenv_kwargs:\n  reward_mode: dense\n")
        (folder / "curve.csv").write_text(f"moves,seconds,deals,win_rate\n0,1,2000,0.1\n10,2,2000,{rate}\n")
    return tmp_path / "td_jax"


def test_the_iqm_is_the_mean_of_the_middle_half_and_its_interval_holds_it(tmp_path):
    rates = [0.50, 0.60, 0.61, 0.62, 0.63, 0.64, 0.65, 0.66, 0.67, 0.90]  # two outliers, 10 seeds
    rows = seed_rows.read_seeds(_runs(tmp_path, rates), Z32)
    result = seed_rows.aggregate(rows, reps=500)
    middle = sorted(rates)[2:8]  # rliable's IQM is scipy's trim_mean(0.25): of 10, 2 dropped at each end
    assert result["iqm"] == pytest.approx(sum(middle) / 6, abs=1e-5)
    low, high = result["iqm_ci"]
    assert 0.55 < low < result["iqm"] < high < 0.75
    assert result["seeds"] == 10 and result["min"] == 0.5 and result["max"] == 0.9


def test_the_command_writes_the_row_and_refuses_to_overwrite_it(tmp_path, capsys):
    runs = _runs(tmp_path, [0.6, 0.61, 0.62])
    (runs / "Zudecken-seed0").mkdir()  # another env's run and an unfinished one are not read
    (runs / "Zudecken32-seed9").mkdir()
    out = tmp_path / "results"
    assert seed_rows.main([str(runs), "--env", "Zudecken32", "--out", str(out), "--optimum", "0.6229"]) == 0
    record = json.loads((out / "seeds-td_jax-Zudecken32.json").read_text())
    assert record["seeds"] == 3 and "a published row has 10" in record["title"]
    assert record["title"].startswith("PPO (dense reward, mlp 64x64) on quadrat_env/Zudecken32-v0")
    assert "of the optimum" in (out / "seeds-td_jax-Zudecken32.md").read_text()
    assert (out / "seeds-td_jax-Zudecken32.png").read_bytes()[:4] == b"\x89PNG"  # every seed's curve
    with pytest.raises(SystemExit) as stop:
        seed_rows.main([str(runs), "--env", "Zudecken32", "--out", str(out)])
    assert stop.value.code == 2 and "pass --overwrite" in capsys.readouterr().err


def test_a_seed_trained_in_one_program_with_others_says_so(tmp_path):
    runs = _runs(tmp_path, [0.6, 0.61])
    summary_file = runs / "Zudecken32-seed1" / "summary.json"
    summary_file.write_text(json.dumps({**json.loads(summary_file.read_text()), "program_seeds": [1, 2, 3]}))
    rows = seed_rows.read_seeds(runs, Z32)
    lines = seed_rows.table("t", rows, seed_rows.aggregate(rows, reps=100), None).splitlines()
    assert lines[-2].endswith("| 1.0 | cpu |") and "| 1.0 (3 seeds in one program) | cpu |" in lines[-1]


def test_a_broken_summary_is_named(tmp_path):
    runs = _runs(tmp_path, [0.6])
    (runs / "Zudecken32-seed0" / "summary.json").write_text("{}")
    with pytest.raises(ValueError, match="Zudecken32-seed0/summary.json: no test win rate"):
        seed_rows.read_seeds(runs, Z32)


def test_a_td_run_names_its_network_by_its_features(tmp_path):
    runs = _runs(tmp_path, [0.6])
    summary_file = runs / "Zudecken32-seed0" / "summary.json"
    summary = json.loads(summary_file.read_text())
    del summary["network"], summary["net_arch"]
    summary_file.write_text(json.dumps({**summary, "features": "zudecken-afterstates"}))
    assert seed_rows.read_seeds(runs, Z32)[0]["network"] == "zudecken-afterstates"


def test_the_optimum_line_shows_inside_the_frame(tmp_path, monkeypatch):
    """Curves from 1.85% to 26.2% autoscale to a top of 27.415%: the 27.41% optimum would lie on the frame."""
    import matplotlib.pyplot as plt
    from quadrat_env.experiments.common import plots

    runs = _runs(tmp_path, [0.262], name="Zudecken")
    (runs / "Zudecken-seed0" / "curve.csv").write_text(
        "moves,seconds,deals,win_rate\n0,1,2000,0.0185\n10,2,2000,0.262\n"
    )
    tops, close = [], plt.close
    monkeypatch.setattr(plots.plt, "close", lambda fig: tops.append(fig.axes[0].get_ylim()) or close(fig))
    plots.seed_curves(
        {"Zudecken": [runs / "Zudecken-seed0" / "curve.csv"]}, tmp_path / "p.png", {"Zudecken": 0.2741}
    )
    ((low, high),) = tops
    assert 27.41 + 0.03 * (high - low) < high


def test_the_row_holds_the_seeds_validation_at_each_point_they_share(tmp_path):
    runs = _runs(tmp_path, [0.6, 0.62, 0.7])
    for seed in (0, 2):  # a third point at 20 moves, where seed 1 has it at 30: not shared
        curve = runs / f"Zudecken32-seed{seed}" / "curve.csv"
        curve.write_text(curve.read_text() + "20,3,2000,0.71\n")
    (runs / "Zudecken32-seed1" / "curve.csv").write_text(
        "moves,seconds,deals,win_rate\n0,1,2000,0.1\n10,2,2000,0.62\n30,4,2000,0.65\n"
    )
    out = tmp_path / "results"
    assert seed_rows.main([str(runs), "--env", "Zudecken32", "--out", str(out)]) == 0
    record = json.loads((out / "seeds-td_jax-Zudecken32.json").read_text())
    assert record["validation"] == [
        {"moves": 0, "mean": 0.1, "min": 0.1, "max": 0.1},
        {"moves": 10, "mean": 0.64, "min": 0.6, "max": 0.7},
    ]
    assert "| 10 | 64.00% | 60.00%–70.00% |" in (out / "seeds-td_jax-Zudecken32.md").read_text()


def _benchmark_rows(rates, env_id=Z32, algo="ppo_jax"):  # noqa: ANN001, ANN202
    return [{"env_id": env_id, "algo": algo, "train_seed": k, "win_rate": r, "illegal_rate": 0.0,
             "learned_from": "the reward"} for k, r in enumerate(rates)]  # fmt: skip


def test_the_benchmarks_summary_of_each_learned_kind_is_the_seed_row_of_its_rates():
    import numpy as np

    rates = [0.50, 0.60, 0.61, 0.62, 0.63, 0.64, 0.65, 0.66, 0.67, 0.90]
    rows = _benchmark_rows(rates) + _benchmark_rows([0.3], algo="rl") + [{"env_id": Z32, "agent": "greedy"}]
    np.random.seed(7)
    before = np.random.random(3)
    np.random.seed(7)
    summary = {s["algo"]: s for s in seed_rows.learned_summary(rows)}
    assert np.array_equal(np.random.random(3), before)  # the bootstrap's seeding leaves the caller's draws be
    assert set(summary) == {"ppo_jax", "rl"}  # the greedy row is no learned kind
    row = seed_rows.aggregate([{"test_win_rate": r} for r in rates])  # seed_rows' published row
    ppo = summary["ppo_jax"]
    assert ppo["iqm_win_rate"] == pytest.approx(row["iqm"], abs=1e-5) and ppo["seeds"] == 10
    assert ppo["iqm_ci"] == pytest.approx(row["iqm_ci"], abs=1e-5)
    assert ppo["mean_win_rate"] == pytest.approx(np.mean(rates)) and ppo["min_win_rate"] == 0.5
    assert summary["rl"]["iqm_win_rate"] == 0.3 and summary["rl"]["seeds"] == 1


@pytest.mark.parametrize(("change", "message"), [
    (lambda runs: _rate(runs / "Zudecken32-seed1", float("nan")), "is not a win rate in [0, 1]"),
    (lambda runs: _rate(runs / "Zudecken32-seed1", 5.0), "is not a win rate in [0, 1]"),
    (lambda runs: shutil.copytree(runs / "Zudecken32-seed1", runs / "Zudecken32-seed01"), "seed 1 twice"),
    (lambda runs: (runs / "Zudecken32-seed1" / "curve.csv").write_text("nonsense\n\x00\n"),
     "is not a validation curve"),
])  # fmt: skip
def test_bad_seed_runs_are_refused_with_one_line(tmp_path, capsys, change, message):
    runs = _runs(tmp_path, [0.6, 0.61, 0.62])
    change(runs)
    with pytest.raises(SystemExit) as stop:
        seed_rows.main([str(runs), "--env", "Zudecken32", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and message in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()  # nothing written


def _rate(folder, rate):  # noqa: ANN001, ANN202
    summary = json.loads((folder / "summary.json").read_text())
    (folder / "summary.json").write_text(json.dumps({**summary, "test_win_rate": rate}))


@pytest.mark.parametrize(("argv", "message"), [
    (["--reps", "100000000"], "--reps must be in 100..100,000"),
    (["--out", "FILE"], "is a file, not a folder"),
])  # fmt: skip
def test_bad_arguments_are_refused_before_any_work(tmp_path, capsys, argv, message):
    runs = _runs(tmp_path, [0.6, 0.61])
    (tmp_path / "FILE").write_text("")
    argv = [str(tmp_path / "FILE") if a == "FILE" else a for a in argv]
    with pytest.raises(SystemExit) as stop:
        seed_rows.main([str(runs), "--env", "Zudecken32", *argv])
    assert stop.value.code == 2 and message in capsys.readouterr().err


def test_the_three_files_are_one_change(tmp_path, monkeypatch):
    """Killed between its renames (the journal's step 3), the next run finishes the earlier change
    first: the .json and the .md always count the same seeds."""
    from quadrat_env import journal

    out = tmp_path / "out"
    runs = _runs(tmp_path, [0.6, 0.61, 0.62])
    assert seed_rows.main([str(runs), "--env", "Zudecken32", "--out", str(out)]) == 0
    _runs(tmp_path / "more", [0.6, 0.61, 0.62, 0.63])
    for p in (tmp_path / "more" / "td_jax").iterdir():
        if not (runs / p.name).exists():
            p.rename(runs / p.name)

    def killed(kind):  # noqa: ANN001, ANN202
        if kind == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(journal, "_step", killed)
    with pytest.raises(KeyboardInterrupt):
        seed_rows.main([str(runs), "--env", "Zudecken32", "--out", str(out), "--overwrite"])
    monkeypatch.undo()
    journal.finish(out / seed_rows.JOURNAL)
    record = json.loads((out / "seeds-td_jax-Zudecken32.json").read_text())
    assert record["seeds"] == 4 and "4 seeds" in (out / "seeds-td_jax-Zudecken32.md").read_text()


def test_the_iqm_is_rliables_to_the_bit():
    from rliable import metrics

    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 4, 5, 7, 10, 15, 40):
        for _ in range(50):
            scores = rng.random((n, 1)) * rng.choice([1.0, 1e-3, 1e3])
            assert seed_rows.iqm_of(scores) == metrics.aggregate_iqm(scores), (n, scores.ravel())
        ties = rng.integers(0, 3, size=(n, 1)) / 7  # equal rates, as seeds that won the same deals
        assert seed_rows.iqm_of(ties) == metrics.aggregate_iqm(ties)
