"""Afterstate TD(0): a tiny run learns, a stopped run resumes to the same weights, bad input is refused."""

from __future__ import annotations

import hashlib
import json
import signal

import numpy as np
import pytest
import torch
import yaml

pytest.importorskip("sb3_contrib")

from quadrat_env.agents.evaluate import evaluate  # noqa: E402
from quadrat_env.agents.random_agent import RandomAgent  # noqa: E402
from quadrat_env.agents.sb3_agent import SB3Agent  # noqa: E402
from quadrat_env.experiments import td  # noqa: E402
from quadrat_env.experiments.common import checkpoint  # noqa: E402
from quadrat_env.experiments.common.td_learner import Learner  # noqa: E402

from quadrat_env import seeds  # noqa: E402

Z32 = "quadrat_env/Zudecken32-v0"
DEALS = seeds.VALIDATION.take(1000)


def small(**kw) -> td.Settings:  # noqa: ANN003
    values = {
        "n_moves": 5000,
        "n_envs": 64,
        "batch_size": 256,
        "eval_deals": 50,
        "features": "zudecken-afterstates",
        **kw,
    }
    return td.Settings(env_id=Z32, seed=1, **values)


def win_rate(agent) -> float:  # noqa: ANN001
    return evaluate(Z32, agent, DEALS, progress=False, n_envs=250)[0].win_rate


def test_a_tiny_run_learns_from_the_reward_alone():
    """100k moves (a few seconds): well above both its own random start (which plays greedy's moves)
    and the random agent, on 1,000 fixed validation deals (measured: 13% at the start, 8% random)."""
    learner = Learner(small(n_moves=100_000, n_envs=256, batch_size=512, learning_rate=3e-3,
                            learning_rate_end=3e-3))  # fmt: skip
    start = win_rate(SB3Agent(learner.model, "td", masked=True))
    while learner.moves < learner.settings.n_moves:
        learner.play_until_update()
    learned = win_rate(SB3Agent(learner.model, "td", masked=True))
    assert learned > start + 0.05
    assert learned > win_rate(RandomAgent(seed=0)) + 0.1
    # the training deals' outcomes are counted from the ended deals' info (same-step autoreset)
    assert learner.deals > 1000 and 0.05 < learner.summary()["training_win_rate"] < learned + 0.1


def test_a_resumed_learner_reaches_the_uninterrupted_weights(tmp_path):
    whole = Learner(small())
    for _ in range(4):
        whole.play_until_update()
    first = Learner(small())
    for _ in range(2):
        first.play_until_update()
    checkpoint.save(tmp_path / "c.npz", *first.snapshot())
    resumed = Learner(small())
    resumed.restore(*checkpoint.load(tmp_path / "c.npz"))
    for _ in range(2):
        resumed.play_until_update()
    a, b = whole.model.policy.state_dict(), resumed.model.policy.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert (whole.moves, whole.updates) == (resumed.moves, resumed.updates)


def test_the_command_stops_on_ctrl_c_resumes_and_writes_a_loadable_model(tmp_path, monkeypatch, capsys):
    (tmp_path / "td.yml").write_text(
        f"{Z32}: {{n_moves: 3000, n_envs: 64, batch_size: 256, features: zudecken-afterstates}}\n"
    )
    argv = ["--env", Z32, "--seed", "2", "--hyperparams", str(tmp_path / "td.yml"), "--eval-every", "1000",
            "--eval-deals", "20", "--no-progress", "--out", str(tmp_path)]  # fmt: skip
    play = Learner.play_until_update

    def ctrl_c_after_1000(self):  # noqa: ANN001, ANN202
        if self.moves >= 1000:
            signal.raise_signal(signal.SIGINT)
        return play(self)

    monkeypatch.setattr(Learner, "play_until_update", ctrl_c_after_1000)
    assert td.main(argv) == 128 + signal.SIGINT
    assert "--resume" in capsys.readouterr().err
    monkeypatch.setattr(Learner, "play_until_update", play)
    run = tmp_path / "td" / "Zudecken32-seed2"
    (run / ".checkpoint.tmpk9x2_a1.npz").write_bytes(b"half")  # a checkpoint write killed part-way
    assert td.main([*argv, "--resume"]) == 0
    assert not list(run.glob(".*.tmp*"))  # the finished run keeps no half-written copy
    assert yaml.safe_load((run / "config.yml").read_text())["batch_size"] == 256
    summary = json.loads((run / "summary.json").read_text())
    assert summary["moves"] >= 3000 and summary["method"] == td.METHOD
    assert not (run / "checkpoint.npz").exists()
    curve = (run / "curve.csv").read_text().splitlines()
    assert curve[0].startswith("moves,") and len(curve) >= 4
    agent = SB3Agent.load(run / "model.zip", "maskable_ppo", Z32)  # the safe loader: nothing unpickled
    summary_bench, _ = evaluate(Z32, agent, DEALS[:20], progress=False)
    assert summary_bench.episodes == 20 and summary_bench.illegal_rate == 0


@pytest.mark.parametrize(
    ("override", "message"),
    [({"n_envs": 0}, "n_envs"), ({"epsilon_start": 2.0}, "epsilon_start"), ({"features": "zudecken"},
     "afterstate"), ({"env_kwargs": {"reward_mode": "dense"}}, "sparse"), ({"batch": 3}, "unknown"),
     ({"features": None}, "lack features"), ({"env_kwargs": [1]}, "mapping"),
     ({"n_moves": 100, "batch_size": 512}, "never fill")],
)  # fmt: skip
def test_bad_settings_are_refused_with_their_name(override, message):
    with pytest.raises(ValueError, match=message):
        entry = {"n_moves": 1000, "features": "zudecken-afterstates", **override}
        entry = {k: v for k, v in entry.items() if v is not None}
        Learner.check_network(td.Settings.from_entry(Z32, 0, entry))


def test_bad_arguments_exit_2_with_one_line(tmp_path, capsys):
    for bad in (
        ["--moves", "0"],
        ["--seed", "-1"],
        ["--checkpoint-minutes", "-1"],
        ["--moves", "100"],
    ):
        with pytest.raises(SystemExit) as stop:
            td.main(["--env", Z32, "--out", str(tmp_path), *bad])
        assert stop.value.code == 2
    assert not (tmp_path / "td").exists()  # nothing was written


def test_greedy_on_the_scores_is_what_the_saved_policy_plays():
    learner = Learner(small())
    learner.play_until_update()
    obs, masks = learner.obs, np.asarray(learner.masks, bool)
    with torch.no_grad():
        scores = learner.net(torch.from_numpy(obs)).masked_fill(~torch.from_numpy(masks), -torch.inf)
    actions, _ = learner.model.predict(obs, action_masks=masks, deterministic=True)
    assert np.array_equal(actions, scores.argmax(1).numpy())


def test_settings_the_run_cannot_fill_or_hold_are_refused_before_any_work(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:  # batch_size 512 > 100 moves: the first batch never fills
        td.main(["--env", Z32, "--out", str(tmp_path), "--moves", "100"])
    assert stop.value.code == 2 and "never fill" in capsys.readouterr().err
    yml = tmp_path / "huge.yml"  # a batch of 10^11 afterstates: refused with the figure and the flag
    yml.write_text(f"{Z32}: {{n_moves: {10**12}, batch_size: {10**11}, features: zudecken-afterstates}}\n")
    with pytest.raises(SystemExit) as stop:
        td.main(["--env", Z32, "--out", str(tmp_path), "--hyperparams", str(yml)])
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and "GiB" in err[-1] and "--n-envs" in err[-1] and "error" in err[-1]
    assert not (tmp_path / "td").exists()


def test_resume_from_a_damaged_or_reshaped_checkpoint_is_one_line(tmp_path, monkeypatch, capsys):
    """A flipped byte fails the checksum; a wrong-shaped array with a matching checksum fails the
    shape check; either: one line, exit 2, the checkpoint kept for a look."""
    (tmp_path / "td.yml").write_text(f"{Z32}: {{n_moves: 3000, n_envs: 64, batch_size: 256, "
                                     "features: zudecken-afterstates}\n")  # fmt: skip
    argv = ["--env", "Zudecken32", "--hyperparams", str(tmp_path / "td.yml"), "--eval-deals", "20",
            "--no-progress", "--out", str(tmp_path)]  # fmt: skip
    play = Learner.play_until_update

    def stop_at_once(self):  # noqa: ANN001, ANN202
        signal.raise_signal(signal.SIGTERM)
        return play(self)

    monkeypatch.setattr(Learner, "play_until_update", stop_at_once)
    assert td.main(argv) == 128 + signal.SIGTERM
    monkeypatch.setattr(Learner, "play_until_update", play)
    path = tmp_path / "td" / "Zudecken32-seed0" / "checkpoint.npz"
    meta, arrays = checkpoint.load(path)
    whole = path.read_bytes()
    at = len(whole) // 2
    path.write_bytes(whole[:at] + bytes([whole[at] ^ 0x10]) + whole[at + 1 :])  # the zip's CRC finds it
    weights = next(k for k in arrays if k.startswith("policy/"))
    changed = {**arrays, weights: arrays[weights] + 1e-3}  # a well-formed file, the old checksum
    said = hashlib.sha256(b"x").hexdigest()
    cases = [(None, "checkpoint.npz is not a readable checkpoint"),
             (changed, "checkpoint.npz does not match its checksum"),  # then crafted meta, checksum and all:
             ({"moves": "lots"}, "the checkpoint's moves is str, the run holds int"),
             ({"moves": 10**12}, "the checkpoint's moves 1,000,000,000,000 is not in 0..3,064"),
             ({"wins": 10**6}, "the checkpoint's wins 1,000,000 is not in 0.."),
             ("no td", "not a td checkpoint of these settings (KeyError)"),
             ("reshaped", "not a checkpoint of these settings")]  # fmt: skip
    for change, expected in cases:
        if change is changed:
            with open(path, "wb") as f:
                np.savez(f, __meta__=np.array(json.dumps(meta)), __sha256__=np.array(said), **change)
        elif isinstance(change, dict) or change == "no td":
            crafted = {k: v for k, v in meta.items() if k not in ("version", "td")}
            if change != "no td":
                crafted["td"] = {**meta["td"], **change}
            checkpoint.save(path, crafted, arrays)
        elif change == "reshaped":  # one column short, saved with a matching checksum
            env_key = next(k for k in arrays if k.startswith("env/") and arrays[k].ndim == 2)
            arrays[env_key] = arrays[env_key][:, :-1]
            checkpoint.save(path, {k: v for k, v in meta.items() if k != "version"}, arrays)
        capsys.readouterr()
        with pytest.raises(SystemExit) as stop:
            td.main([*argv, "--resume"])
        err = capsys.readouterr().err.strip().splitlines()
        assert stop.value.code == 2 and expected in err[-1] and "Traceback" not in "\n".join(err), err
    assert path.is_file()


@pytest.mark.parametrize(("extra", "message"), [
    ("features_kwargs: {channels: 100000}", "features_kwargs {'channels': 100000}: ZudeckenAfterstates"),
    ("features_kwargs: {width: 3}", "features_kwargs {'width': 3}: "),
    ("env_kwargs: {bogus: 1}", "env_kwargs {'bogus': 1}: "),
    ("eval_deals: 1000000000000", "eval_deals 1,000,000,000,000: validation: seeds"),
    ("env_kwargs: {x: *loop}", "env_kwargs {'x': [[...]]}"),  # a YAML alias that contains itself
])  # fmt: skip
def test_settings_the_env_or_network_cannot_take_are_one_line_before_any_work(
    tmp_path, capsys, extra, message
):
    yml = tmp_path / "td.yml"
    yml.write_text(f"loop: &loop [*loop]\n{Z32}: {{n_moves: 3000, n_envs: 64, batch_size: 256, "
                   f"features: zudecken-afterstates, {extra}}}\n")  # fmt: skip
    with pytest.raises(SystemExit) as stop:
        td.main(["--env", "Zudecken32", "--hyperparams", str(yml), "--out", str(tmp_path / "runs")])
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and message in err[-1] and "Traceback" not in "\n".join(err)
    assert not (tmp_path / "runs").exists()


def test_a_bad_flag_is_named_as_typed(tmp_path, capsys):
    for flag in ("--moves", "--n-envs", "--eval-every", "--eval-deals"):
        with pytest.raises(SystemExit) as stop:
            td.main(["--env", "Zudecken32", "--out", str(tmp_path), flag, "0"])
        assert stop.value.code == 2 and f"{flag} must be >= 1, got 0" in capsys.readouterr().err
