"""Afterstate TD(0) in JAX: a tiny run learns, a stopped run resumes
to the same weights, the exported model plays on the compiled env, bad input is one line."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest
import yaml

pytest.importorskip("jax")
pytest.importorskip("optax")
pytest.importorskip("sb3_contrib")

from quadrat_env.experiments import td_jax  # noqa: E402
from quadrat_env.experiments.checks import model_equal  # noqa: E402
from quadrat_env.experiments.common import checkpoint  # noqa: E402
from quadrat_env.experiments.common.jax_learners import run as jax_run  # noqa: E402
from quadrat_env.experiments.common.jax_learners.td import JaxTD  # noqa: E402

Z32, Z52 = "quadrat_env/Zudecken32-v0", "quadrat_env/Zudecken-v0"


def small(**kw) -> td_jax.Settings:  # noqa: ANN003
    net = {"features": "zudecken-afterstates", "features_kwargs": {"channels": 8, "layers": 2, "hidden": 16}}
    values = {"n_moves": 8192, "n_envs": 64, "steps_per_update": 2, "eval_every": 4096, "eval_deals": 64,
              "test_deals": 128, **net, **kw}  # fmt: skip
    return td_jax.Settings(**{"env_id": Z32, "seed": 1, **values})


def test_a_tiny_run_learns_and_its_model_plays_on_the_compiled_env(tmp_path):
    """60k moves at a step size of 3e-3 (to 1e-3) lift the validation win rate well above the
    random start (measured at the default size: 14.8% -> 33.4%; seeds 1 and 2: +12.8 and +17.8
    points; 120k moves: 14.8% -> 35.2%); the model.zip it writes plays the benchmark's deals on the
    compiled env as the JAX env does, but for near-ties broken differently."""
    settings = small(seed=0, n_moves=60_000, n_envs=256, steps_per_update=1, eval_every=60_000,
                     eval_deals=500, test_deals=250, features_kwargs={}, learning_rate=3e-3,
                     learning_rate_end=1e-3)  # fmt: skip
    summary = td_jax.train(settings, tmp_path, progress=False)
    first, last = np.loadtxt(tmp_path / "curve.csv", delimiter=",", skiprows=1)[[0, -1], 3]
    assert last > first + 0.1 and summary["val_win_rate"] == last
    assert not (tmp_path / jax_run.CHECKPOINT).exists()
    # on the same states the two sides part only at near ties: gaps far below the usual ones; then
    # model.zip (SB3, the compiled env, as the benchmark plays it) and the JAX policy each play alone
    (tmp_path / "config.yml").write_text(yaml.safe_dump(settings.config()))  # as the command writes it
    same = model_equal.compare(tmp_path, 250)  # the run's test deals
    assert same["decisions"] > 2000 and same["largest_gap_jax"] <= 1e-3 * same["median_gap_jax"], same
    assert same["wins_jax"] == summary["test_wins"]
    assert abs(same["wins_compiled"] - summary["test_wins"]) <= 8  # measured: 3 of 1,000 apart


def _stop_after_first_call(monkeypatch: pytest.MonkeyPatch) -> None:
    train = jax_run.Runs.train

    def once(self, carry):  # noqa: ANN001, ANN202
        carry = train(self, carry)
        os.kill(os.getpid(), signal.SIGTERM)  # the run's handler: checkpoint and stop
        return carry

    monkeypatch.setattr(jax_run.Runs, "train", once)


def test_a_stopped_run_resumes_to_the_uninterrupted_weights(tmp_path, monkeypatch):
    monkeypatch.setattr(jax_run, "CALL_MOVES", 1024)  # several calls: a stop between two of them
    whole = td_jax.train(small(), tmp_path / "whole", progress=False)
    with monkeypatch.context() as m:
        _stop_after_first_call(m)
        stopped = td_jax.train(small(), tmp_path / "part", progress=False)
    assert stopped == {"interrupted": signal.SIGTERM, "moves": 1024}
    resumed = td_jax.train(small(), tmp_path / "part", resume=True, progress=False)
    a = checkpoint.load(tmp_path / "whole" / jax_run.WEIGHTS)[1]
    b = checkpoint.load(tmp_path / "part" / jax_run.WEIGHTS)[1]
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    assert resumed["moves"] == whole["moves"] == 8192 and resumed["test_wins"] == whole["test_wins"]
    assert (tmp_path / "whole" / "curve.csv").read_text().count("\n") == 4  # 0, 4096, 8192 and a header


def test_a_run_stopped_while_finishing_resumes_without_training_again(tmp_path, monkeypatch):
    """Training done, a stop while the held-out deals are played (or the model exported) keeps the
    trained weights: the checkpoint written at the last validation resumes straight to the finish."""
    whole = td_jax.train(small(), tmp_path / "whole", progress=False)

    def stopped(self, carry):  # noqa: ANN001, ANN202
        raise KeyboardInterrupt  # as a signal would, after training

    with monkeypatch.context() as m:
        m.setattr(jax_run.Runs, "tests", stopped)
        with pytest.raises(KeyboardInterrupt):
            td_jax.train(small(), tmp_path / "part", progress=False)
    assert not (tmp_path / "part" / "summary.json").exists()
    calls = []
    monkeypatch.setattr(jax_run.Runs, "train", lambda self, carry: calls.append(1))
    resumed = td_jax.train(small(), tmp_path / "part", resume=True, progress=False)
    assert calls == [] and resumed["test_wins"] == whole["test_wins"] and resumed["moves"] == 8192
    a = checkpoint.load(tmp_path / "whole" / jax_run.WEIGHTS)[1]
    b = checkpoint.load(tmp_path / "part" / jax_run.WEIGHTS)[1]
    assert all(np.array_equal(a[k], b[k]) for k in a)
    curves = [
        np.loadtxt(tmp_path / run / "curve.csv", delimiter=",", skiprows=1) for run in ("whole", "part")
    ]
    assert np.array_equal(np.delete(curves[0], 1, 1), np.delete(curves[1], 1, 1))  # but the seconds


def test_calls_sized_by_the_clock_give_the_same_run(tmp_path, monkeypatch):
    """How many updates a jitted call makes follows its time (``CALL_SECONDS``); the weights and
    the curve's points (every ``eval_every`` moves) must not depend on it."""
    whole = td_jax.train(small(), tmp_path / "whole", progress=False)
    monkeypatch.setattr(jax_run, "CALL_SECONDS", 1e-9)  # after the first call: one update a call
    calls, train = [], jax_run.Runs.train

    def counted(self, carry):  # noqa: ANN001, ANN202
        before = self.updates
        carry = train(self, carry)
        calls.append(self.updates - before)
        return carry

    monkeypatch.setattr(jax_run.Runs, "train", counted)
    slow = td_jax.train(small(), tmp_path / "slow", progress=False)
    assert calls[0] == 32 and set(calls[1:]) == {1} and sum(calls) == 64  # 4096 moves, then 1 update each
    a = checkpoint.load(tmp_path / "whole" / jax_run.WEIGHTS)[1]
    b = checkpoint.load(tmp_path / "slow" / jax_run.WEIGHTS)[1]
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    points = [
        np.loadtxt(tmp_path / run / "curve.csv", delimiter=",", skiprows=1)[:, 0] for run in ("whole", "slow")
    ]
    assert points[0].tolist() == points[1].tolist() == [0, 4096, 8192]
    assert slow["test_wins"] == whole["test_wins"]


def test_a_checkpoint_of_other_settings_is_refused_naming_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr(jax_run, "CALL_MOVES", 1024)
    _stop_after_first_call(monkeypatch)
    td_jax.train(small(), tmp_path, progress=False)
    other = jax_run.Run(small(n_envs=32), JaxTD(small(n_envs=32)))
    with pytest.raises(ValueError, match="checkpoint.npz: array carry/.* not a checkpoint of these settings"):
        other.restore(tmp_path / jax_run.CHECKPOINT)


@pytest.mark.parametrize(("args", "message"), [
    (["--env", "Quadrille"], "has no entry for 'quadrat_env/Quadrille-v0'"),
    (["--env", "Nope"], "unknown env 'Nope'"),
    (["--env", "Zudecken32", "--moves", "10"], "lower --n-envs"),
    (["--env", "Zudecken32", "--n-envs", "0"], "--n-envs must be >= 1, got 0"),
    (["--export", "missing-folder"], "not a readable checkpoint"),
])  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        td_jax.main([*args, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and message in err.strip().splitlines()[-1], err


def test_settings_check_their_numbers():
    with pytest.raises(ValueError, match="reward_mode: sparse"):
        small(env_kwargs={"reward_mode": "dense"})
    with pytest.raises(ValueError, match="epsilon_end must be a number in"):
        small(epsilon_end=2)
    with pytest.raises(ValueError, match="unknown afterstate network sizes: width"):
        JaxTD(small(features_kwargs={"width": 3}))
    with pytest.raises(ValueError, match="expects a Zudecken observation"):
        JaxTD(small(env_id="quadrat_env/Quadrat-v0"))
    with pytest.raises(ValueError, match="has no JAX afterstate network"):
        JaxTD(small(features="zudecken"))


def test_a_flag_wins_over_set_and_set_over_the_yaml():
    """``--set n_moves=4096 --set n_envs=16`` trains 4,096 moves on 16 envs (a flag not given no
    longer hides ``--set``'s value); a flag given wins over ``--set`` for its key."""
    from quadrat_env.experiments.common.jax_learners import cli

    parser = cli.parser(td_jax.TD_JAX)
    args = parser.parse_args(["--env", "Zudecken32", "--set", "n_moves=4096", "--set", "n_envs=16"])
    assert cli.settings_of(args) == {"n_moves": 4096, "n_envs": 16}
    args = parser.parse_args(["--env", "Zudecken32", "--set", "n_envs=16", "--n-envs", "32"])
    assert cli.settings_of(args) == {"n_envs": 32}
    both = parser.parse_args(["--env", "Zudecken32", "--set", "n_moves=4096", "--set", "n_envs=16"])
    made = td_jax.Settings.load(Z32, 0, td_jax.HYPERPARAMS, **cli.settings_of(both))
    assert (made.n_moves, made.n_envs) == (4096, 16)


@pytest.mark.parametrize(("key", "value", "words"), [("n_envs", "abc", "a whole number"),
                         ("learning_rate", "fast", "a number"), ("n_moves", True, "a whole number"),
                         ("features_kwargs", [1], "a mapping")])  # fmt: skip
def test_a_setting_of_the_wrong_type_is_refused_with_its_name(key, value, words):
    with pytest.raises(ValueError, match=f"{key} must be {words}"):
        td_jax.Settings.load(Z32, 0, td_jax.HYPERPARAMS, **{key: value})


@pytest.mark.parametrize(("argv", "message"), [
    (["--set", "seed=5"], "--set seed: give it with --seed, not --set"),
    (["--set", "env_id=Zudecken"], "--set env_id: give it with --env, not --set"),
    (["--seed", "0", str(2**32)], "--seed: whole numbers in 0..2,147,483,647"),
    (["--seed", "-1"], "--seed: whole numbers in 0.."),
])  # fmt: skip
def test_seeds_and_settings_only_a_flag_gives_are_refused_before_any_work(argv, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        td_jax.main(["--env", "Zudecken32", *argv, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and message in err and "Traceback" not in err
    assert not any(tmp_path.iterdir())  # nothing was made


def test_an_out_that_is_a_file_or_a_damaged_config_is_one_line(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    with pytest.raises(SystemExit) as stop:
        td_jax.main(["--env", "Zudecken32", "--out", str(tmp_path / "file")])
    assert stop.value.code == 2 and "is a file, not a folder" in capsys.readouterr().err
    run_dir = tmp_path / "runs" / "td_jax" / "Zudecken32-seed0"
    run_dir.mkdir(parents=True)
    (run_dir / jax_run.CHECKPOINT).write_bytes(b"x")
    for damaged, words in (("", "holds no settings"), ("a: [unclosed", "cannot be read")):
        (run_dir / "config.yml").write_text(damaged)
        with pytest.raises(SystemExit) as stop:
            td_jax.main(["--env", "Zudecken32", "--out", str(tmp_path / "runs"), "--resume"])
        err = capsys.readouterr().err
        assert stop.value.code == 2 and words in err and "Traceback" not in err


def test_overwrite_of_many_seeds_deletes_none_when_one_cannot_be_claimed(tmp_path, capsys):
    out = tmp_path / "runs"
    seed0 = out / "td_jax" / "Zudecken32-seed0"
    seed0.mkdir(parents=True)
    (seed0 / "summary.json").write_text("{}")  # a finished run
    (out / "td_jax" / "Zudecken32-seed1").write_text("in the way")
    with pytest.raises(SystemExit) as stop:
        td_jax.main(["--env", "Zudecken32", "--seed", "0", "1", "--overwrite", "--out", str(out)])
    assert stop.value.code == 2 and "is a file, not a folder" in capsys.readouterr().err
    assert (seed0 / "summary.json").read_text() == "{}"  # seed 0's run is still there


def test_a_settings_file_is_read_within_bounds(tmp_path, capsys):
    """``--hyperparams /dev/zero`` and a kilobyte of nested aliases (billions of items once walked)
    are refused in one line instead of hanging the run."""
    levels = ['a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        levels.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    laughs = tmp_path / "laughs.yml"
    laughs.write_text(
        "\n".join(levels) + "\nquadrat_env/Zudecken32-v0: {n_moves: 4096, features_kwargs: {x: *i}}\n"
    )
    for path, words in (("/dev/zero", "not a regular file"), (str(laughs), "aliases, over 40")):
        with pytest.raises(SystemExit) as stop:
            td_jax.main(["--env", "Zudecken32", "--hyperparams", path, "--out", str(tmp_path / "runs")])
        err = capsys.readouterr().err
        assert stop.value.code == 2 and words in err, err


def _forged(path, change):  # noqa: ANN001, ANN202
    """The checkpoint at ``path`` with its meta changed by ``change`` and its checksum recomputed."""
    import json

    meta, arrays = checkpoint.load(path)
    change(meta)
    text = json.dumps(meta)
    with open(path, "wb") as f:
        np.savez(f, __meta__=np.array(text), __sha256__=np.array(checkpoint.digest(text, arrays)), **arrays)


@pytest.mark.parametrize(("change", "message"), [
    (lambda m: m["jax_run"].update(updates=10**9), "updates must be a whole number >= 0 at most"),
    (lambda m: m["jax_run"].update(updates="many"), "updates must be a whole number"),
    (lambda m: m["jax_run"].update(wins=10**6), "wins must be a whole number >= 0 at most"),
    (lambda m: m["jax_run"].update(seconds=[1]), "seconds must be a number"),
    (lambda m: m["jax_run"].update(curve=[["x"]]), "curve must be rows of six numbers"),
    (lambda m: m.update(version=1), "version-1 checkpoint"),
])  # fmt: skip
def test_a_crafted_checkpoint_with_a_recomputed_checksum_is_refused(tmp_path, monkeypatch, change, message):
    monkeypatch.setattr(jax_run, "CALL_MOVES", 1024)
    _stop_after_first_call(monkeypatch)
    td_jax.train(small(), tmp_path, progress=False)
    _forged(tmp_path / jax_run.CHECKPOINT, change)
    run = jax_run.Run(small(), JaxTD(small()))
    with pytest.raises(checkpoint.CheckpointError, match=message):
        run.restore(tmp_path / jax_run.CHECKPOINT)


def test_a_stop_during_the_final_validation_is_honoured_and_resumes(tmp_path, monkeypatch):
    """SIGTERM while the last validation plays: the run stops (143's signal) with its checkpoint,
    and --resume finishes it to the uninterrupted run's result without training again."""
    whole = td_jax.train(small(), tmp_path / "whole", progress=False)
    evaluate = jax_run.Runs.evaluate

    def stopped_in_the_last(self, carry):  # noqa: ANN001, ANN202
        if self.updates == self.runs[0].learner.total_updates:
            os.kill(os.getpid(), signal.SIGTERM)
        return evaluate(self, carry)

    with monkeypatch.context() as m:
        m.setattr(jax_run.Runs, "evaluate", stopped_in_the_last)
        out = td_jax.train(small(), tmp_path / "part", progress=False)
    assert out["interrupted"] == signal.SIGTERM and not (tmp_path / "part" / "summary.json").exists()
    resumed = td_jax.train(small(), tmp_path / "part", resume=True, progress=False)
    assert resumed["test_wins"] == whole["test_wins"] and resumed["moves"] == whole["moves"]


def test_seeds_left_unfinished_by_a_stop_in_the_finishing_writes_resume(tmp_path, monkeypatch, capsys):
    """Two seeds in one program, stopped after seed 0 finished its files: --resume with both seeds
    finishes seed 1 (seed 0 is left as it is); then every seed has finished."""
    net = "features_kwargs={channels: 8, layers: 2, hidden: 16}"
    argv = ["--env", "Zudecken32", "--seed", "0", "1", "--moves", "8192", "--n-envs", "64", "--eval-every",
            "4096", "--eval-deals", "64", "--test-deals", "128", "--set", net, "--out", str(tmp_path),
            "--no-progress"]  # fmt: skip
    finish, calls = jax_run._finish, []

    def stop_at_the_second(*args):  # noqa: ANN002, ANN202
        if calls:
            raise KeyboardInterrupt  # as timeout -s TERM would, between seed 0's files and seed 1's
        calls.append(1)
        return finish(*args)

    with monkeypatch.context() as m:
        m.setattr(jax_run, "_finish", stop_at_the_second)
        assert td_jax.main(argv) == 130  # one line, "stopped by Ctrl-C"
    runs = tmp_path / "td_jax"
    assert (runs / "Zudecken32-seed0" / "summary.json").is_file()
    assert not (runs / "Zudecken32-seed1" / "summary.json").exists()
    capsys.readouterr()
    assert td_jax.main([*argv, "--resume"]) == 0
    assert "seed 0 has finished" in capsys.readouterr().err
    assert (runs / "Zudecken32-seed1" / "summary.json").is_file()
    with pytest.raises(SystemExit) as stop:
        td_jax.main([*argv, "--resume"])
    assert stop.value.code == 2 and "every seed's run has finished" in capsys.readouterr().err
