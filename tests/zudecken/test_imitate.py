"""Imitation: labels, losses, schedules and the afterstate network's runs (a few deals; no timing)."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import yaml
from conftest import in_own_process
from quadrat_env.agents import evaluate
from quadrat_env.agents.greedy import GreedyAgent
from quadrat_env.agents.sb3_agent import SB3Agent

from quadrat_env import seeds

ROOT = Path(__file__).resolve().parents[2]
ZU = "quadrat_env/Zudecken-v0"


class _CountingGreedy(GreedyAgent):
    """The greedy agent (the same move in any batch), counting how many deals each predict sees."""

    def __init__(self) -> None:
        super().__init__(ZU)
        self.batches: list[int] = []

    def predict(self, observation, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN201
        self.batches.append(len(np.atleast_2d(observation)))
        return super().predict(observation, *args, **kwargs)


def test_imitation_round_publishes_a_loadable_maskable_model(tmp_path):
    from quadrat_env.experiments import publish
    from quadrat_env.experiments.zudecken import imitate

    imitate.main(["--seed", "0", "--rounds", "1", "--deals-per-round", "30", "--epochs", "1",
                  "--out", str(tmp_path / "runs")])  # fmt: skip
    run = tmp_path / "runs" / "Zudecken-seed0"
    rounds = json.loads((run / "rounds.json").read_text())
    assert rounds[0]["samples"] > 0 and 0 <= rounds[0]["val_win_rate"] <= 1
    target = publish.publish(run, tmp_path / "models")
    assert target == tmp_path / "models" / "Zudecken-maskable_ppo.zip"
    agent = SB3Agent.load(target, "maskable_ppo", ZU)
    summary, _ = evaluate(ZU, agent, range(10), progress=False)
    assert summary.illegal_rate == 0.0
    with pytest.raises(ValueError, match="not a finished run"):
        publish.publish(tmp_path, tmp_path / "models")


def test_afterstate_imitation_saves_a_model_whose_logits_are_the_move_scores(tmp_path, capsys):
    """``--features zudecken-afterstates``: the saved MaskablePPO loads without unpickling, and its
    action logits are the afterstate network's scores, so it plays the legal move scored highest."""
    import torch
    from quadrat_env.agents.safe_load import load_model
    from quadrat_env.experiments.zudecken import imitate

    imitate.main(["--rounds", "2", "--deals-per-round", "30", "--epochs", "1", "--jobs", "1",
                  "--features", "zudecken-afterstates", "--out", str(tmp_path)])  # fmt: skip
    model = load_model(tmp_path / "Zudecken-seed0" / "model.zip", "maskable_ppo", ZU)
    env = gym.make(ZU)
    obs, info = env.reset(seed=3)
    obs_t, _ = model.policy.obs_to_tensor(obs)
    scores = model.policy.features_extractor(obs_t)
    logits = model.policy.get_distribution(obs_t).distribution.logits
    assert torch.allclose(torch.log_softmax(scores, 1), logits, atol=1e-5)
    best = np.where(info["action_mask"] == 1, scores[0].detach().numpy(), -np.inf).argmax()
    assert model.predict(obs, action_masks=info["action_mask"].astype(bool), deterministic=True)[0] == best
    with pytest.raises(SystemExit) as exit_:
        imitate.main(["--features", "zudecken-afterstates", "--net-arch", "64"])
    assert exit_.value.code == 2 and "--net-arch does not apply" in capsys.readouterr().err


def test_a_wider_afterstate_network_is_saved_with_its_sizes_and_loads_safely(tmp_path):
    from quadrat_env.agents.safe_load import load_model
    from quadrat_env.experiments.zudecken import imitate

    assert imitate.main(["--deals-per-round", "20", "--epochs", "1", "--jobs", "1", "--channels", "8",
                         "--layers", "2", "--hidden", "16", "--out", str(tmp_path)]) == 0  # fmt: skip
    model = load_model(tmp_path / "Zudecken-seed0" / "model.zip", "maskable_ppo", ZU)
    net = model.policy.features_extractor
    assert len(net.layers) == 2 and net.layers[0].own.out_features == 8
    assert net.head[0].out_features == 16
    obs, info = gym.make(ZU).reset(seed=3)
    action, _ = model.predict(obs, action_masks=info["action_mask"].astype(bool), deterministic=True)
    assert info["action_mask"][action] == 1


def test_side_by_side_play_labels_what_the_policy_reaches_whatever_the_width():
    """``collect(..., width=N)`` (``--play-batch``): one batched predict per step over N deals; the
    labelled decisions do not depend on N, and with no random moves they are the decisions the
    policy reaches playing each deal on its own."""
    from quadrat_env.experiments.zudecken import imitate_labels
    from quadrat_env.experiments.zudecken.imitate_labels import Collection

    deals, sets = range(700, 720), []
    for width in (1, 3, 16):
        policy = _CountingGreedy()
        data = imitate_labels.collect(
            policy, deals, Collection(0.2, False, width=width), np.random.default_rng(0)
        )
        sets.append(sorted(zip(map(bytes, data["obs"]), map(bytes, data["wins"]), strict=True)))
        assert max(policy.batches) == width
    assert sets[0] and sets[0] == sets[1] == sets[2]
    data = imitate_labels.collect(
        _CountingGreedy(), deals, Collection(0.0, False, width=8), np.random.default_rng(0)
    )
    one_by_one = imitate_labels.collect(
        _CountingGreedy(), deals, Collection(0.0, False), np.random.default_rng(0)
    )
    assert sorted(map(bytes, data["obs"])) == sorted(map(bytes, one_by_one["obs"]))


def test_imitation_labels_do_not_depend_on_the_number_of_jobs(monkeypatch):
    from quadrat_env.experiments.zudecken import imitate_labels
    from quadrat_env.experiments.zudecken.imitate_labels import Collection

    monkeypatch.setattr(imitate_labels, "CHUNK", 20)  # three chunks, each with its own generator
    one = imitate_labels.collect_parallel(None, range(500, 560), Collection(0.1, True), (0, 0), jobs=1)
    two = imitate_labels.collect_parallel(None, range(500, 560), Collection(0.1, True), (0, 0), jobs=2)
    assert len(one["obs"]) > 0
    for key in ("obs", "mask", "wins"):
        assert (one[key] == two[key]).all()


def test_soft_labels_are_win_shares_over_sampled_orders():
    from quadrat_env.experiments.zudecken import imitate_labels
    from quadrat_env.experiments.zudecken.imitate_labels import Collection

    data = imitate_labels.collect_parallel(
        None, range(500, 530), Collection(0.1, True, label_samples=8), (0, 0), jobs=1
    )
    wins, mask = data["wins"], data["mask"]
    assert len(wins) > 20 and ((wins >= 0) & (wins <= 1)).all() and (wins[~mask] == 0).all()
    assert np.isin(wins[mask], np.arange(9) / 8).all()  # shares of 8 samples
    assert ((wins[mask] > 0) & (wins[mask] < 1)).any()
    legal = np.where(mask, wins, np.nan)
    assert (np.nanmax(legal, axis=1) > np.nanmin(legal, axis=1)).all()  # only decisions that tell moves apart


def test_shared_labels_file_is_reused_and_checked(tmp_path, capsys):
    from quadrat_env.experiments.zudecken import imitate

    labels = tmp_path / "labels.npz"
    common = ["--rounds", "1", "--deals-per-round", "12", "--epochs", "1", "--jobs", "1",
              "--label-samples", "4", "--labels", str(labels), "--out", str(tmp_path / "runs")]  # fmt: skip
    assert imitate.main(["--seed", "0", *common]) == 0 and labels.is_file()
    before = labels.stat().st_mtime_ns
    assert imitate.main(["--seed", "1", *common]) == 0 and labels.stat().st_mtime_ns == before
    made = yaml.safe_load((tmp_path / "runs" / "Zudecken-seed1" / "config.yml").read_text())["labels_made"]
    assert made["deals"] == [seeds.imitation(0, 12).start, seeds.imitation(0, 12).stop]  # seed 0's deals
    other = [a if a != "4" else "5" for a in common]
    assert imitate.main(["--seed", "2", *other]) == 2 and "holds labels made" in capsys.readouterr().err
    data = labels.read_bytes()
    labels.write_bytes(data[: len(data) // 2])  # cut short: a damaged cache of labels is made again
    assert imitate.main(["--seed", "3", *common]) == 0
    assert "making the labels again" in capsys.readouterr().err
    assert labels.read_bytes() != data[: len(data) // 2] and np.load(labels)["obs"].shape[0] > 0


def test_softmax_imitation_loss_ranks_the_winning_moves_first():
    """``fit(..., loss_kind="softmax")`` moves the legal moves' softmax towards the winning moves."""
    import torch
    from quadrat_env.experiments.zudecken import imitate, imitate_labels
    from quadrat_env.experiments.zudecken.imitate_labels import Collection
    from sb3_contrib import MaskablePPO

    data = imitate_labels.collect_parallel(None, range(500, 560), Collection(0.1, True), (0, 0), jobs=1)
    model = MaskablePPO("MlpPolicy", gym.make(ZU), seed=0, device="cpu")

    def winning_share() -> float:  # probability the policy puts on winning moves, mean over decisions
        obs = torch.as_tensor(data["obs"])
        logits = model.policy.get_distribution(obs).distribution.logits.detach()
        p = torch.softmax(logits.masked_fill(torch.as_tensor(data["mask"]) == 0, -1e9), dim=1)
        return float((p * torch.as_tensor(data["wins"])).sum(1).mean())

    before = winning_share()
    imitate.fit(model, data, epochs=20, batch_size=64, lr=1e-3, seed=0, loss_kind="softmax")
    assert winning_share() > before + 0.2


def test_ranked_loss_rewards_the_labels_order_within_each_decision():
    """``_rank_loss``: lower when the logits order the legal moves as their labels do, by the
    labels' gaps (a move 0.001 worse costs little, one 0.1 worse much); blind to illegal moves and
    to a constant added to a decision's logits."""
    import torch
    from quadrat_env.experiments.zudecken import imitate
    from quadrat_env.experiments.zudecken.imitate_settings import Settings

    labels = torch.tensor([[0.60, 0.55, 0.30, 0.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0, 0.0]])
    right, wrong = torch.tensor([[0.3, 0.1, -0.5, 9.0]]), torch.tensor([[0.1, 0.3, -0.5, 9.0]])
    assert imitate._rank_loss(right, mask, labels) < imitate._rank_loss(wrong, mask, labels)
    assert imitate._rank_loss(right + 2.0, mask, labels) == pytest.approx(
        float(imitate._rank_loss(right, mask, labels))
    )
    shifted = right.clone()
    shifted[0, 3] = -9.0  # the illegal move's logit changes nothing
    assert imitate._rank_loss(shifted, mask, labels) == pytest.approx(
        float(imitate._rank_loss(right, mask, labels))
    )
    close, far = torch.tensor([[0.600, 0.599, 0.30, 0.0]]), torch.tensor([[0.600, 0.500, 0.30, 0.0]])
    swapped = torch.tensor([[0.0, 0.1, -0.5, 0.0]])  # puts the second move first
    assert imitate._rank_loss(swapped, mask, close) < imitate._rank_loss(swapped, mask, far)
    assert "ranking" in Settings(loss="ranked").method and "BCE)" in Settings().method


def test_imitation_learning_rate_schedules():
    from quadrat_env.experiments.zudecken import imitate

    settings = imitate.Settings(learning_rate=1e-3, epochs=8)
    assert [imitate._learning_rate(settings, e) for e in (0, 4, 8)] == [1e-3] * 3  # no decay: constant
    settings.lr_decay = "cosine"
    start, middle, end = (imitate._learning_rate(settings, e) for e in (0, 4, 8))
    assert start == pytest.approx(1e-3) and middle == pytest.approx(0.505e-3) and end == pytest.approx(1e-5)


def test_augmented_imitation_learns_what_holds_under_renaming():
    """``fit(augment=True)`` trains on renamed copies only: on 237 decisions the plain fit learns the
    decisions as recorded (its first choice wins far more often there than on renamed copies of the
    same decisions), the augmented fit does as well on both, and better than before training."""
    import torch
    from quadrat_env.agents.networks import policy_kwargs_with
    from quadrat_env.agents.zudecken.features import random_renaming, relabel
    from quadrat_env.experiments.zudecken import imitate, imitate_labels
    from quadrat_env.experiments.zudecken.imitate_labels import Collection
    from sb3_contrib import MaskablePPO

    data = imitate_labels.collect_parallel(None, range(500, 560), Collection(0.1, True), (0, 0), jobs=1)
    recorded = tuple(torch.as_tensor(data[k]) for k in ("obs", "mask", "wins"))
    renamed = relabel(*recorded, *random_renaming(len(recorded[0]), torch.Generator().manual_seed(9)))

    def first_choice_wins(model, obs, mask, wins) -> float:  # share of decisions whose argmax still wins
        logits = model.policy.get_distribution(obs).distribution.logits.detach()
        return float(wins.gather(1, logits.masked_fill(mask == 0, -1e9).argmax(1, keepdim=True)).mean())

    scores = {}
    for augment in (False, True):
        model = MaskablePPO("MlpPolicy", gym.make(ZU), seed=0, device="cpu",
                            policy_kwargs=policy_kwargs_with("zudecken", None))  # fmt: skip
        untrained = first_choice_wins(model, *renamed)
        imitate.fit(model, data, epochs=20, batch_size=64, lr=1e-3, seed=0, augment=augment, lr_end=1e-4)
        scores[augment] = [first_choice_wins(model, *recorded), first_choice_wins(model, *renamed)]
    assert scores[False][0] - scores[False][1] > 0.15
    assert abs(scores[True][0] - scores[True][1]) < 0.05 and scores[True][1] > untrained + 0.03


def test_imitation_collection_ends_with_one_error_when_a_worker_fails():
    from quadrat_env.experiments.common.parallel import WorkerFailed
    from quadrat_env.experiments.zudecken import imitate_labels
    from quadrat_env.experiments.zudecken.imitate_labels import Collection

    with pytest.raises(WorkerFailed, match="labelling deals"):  # a model file that is not there
        imitate_labels.collect_parallel(
            "/nonexistent/behaviour.zip", range(0, 10), Collection(0.1, False), (0, 0), jobs=2
        )


def collect_in_chunks_of(chunk: int, *args, **kwargs):  # noqa: ANN002, ANN003, ANN201
    """``collect_parallel`` with ``chunk`` deals a task (run in a process of its own)."""
    from quadrat_env.experiments.zudecken import imitate_labels

    imitate_labels.CHUNK = chunk
    return imitate_labels.collect_parallel(*args, **kwargs)


def test_imitation_labels_on_ray_equal_the_local_ones(monkeypatch):
    pytest.importorskip("ray")
    from quadrat_env.experiments.zudecken import imitate_labels
    from quadrat_env.experiments.zudecken.imitate_labels import Collection

    monkeypatch.setattr(imitate_labels, "CHUNK", 10)  # three tasks, each with its own generator
    local = imitate_labels.collect_parallel(
        None, range(700, 730), Collection(0.1, True, label_samples=4), (0, 0), jobs=1
    )
    ray = in_own_process(  # a Ray driver in a process of its own, as in the imitation command
        collect_in_chunks_of, 10,
        None, range(700, 730), Collection(0.1, True, label_samples=4), (0, 0), jobs=2, ray="local",
    )  # fmt: skip
    assert len(local["obs"]) > 0
    for key in ("obs", "mask", "wins"):
        assert (local[key] == ray[key]).all()


def _not_round_0(behaviour, *args):  # noqa: ANN001, ANN002, ANN202
    from quadrat_env.experiments.zudecken.imitate_labels import collect_parallel

    if behaviour is None:
        pytest.fail("round 0's labels, kept in labels/, were collected again")
    return collect_parallel(behaviour, *args)


def test_an_interrupted_imitation_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch, capsys):
    import json

    from quadrat_env.agents.safe_load import load_model
    from quadrat_env.experiments.common import checkpoint
    from quadrat_env.experiments.zudecken import imitate

    args = ["--rounds", "2", "--deals-per-round", "20", "--epochs", "2", "--eval-every", "1", "--jobs", "1",
            "--features", "zudecken"]  # fmt: skip
    assert imitate.main([*args, "--out", str(tmp_path / "a")]) == 0
    save = checkpoint.save_imitation
    capsys.readouterr()
    import torch

    # checkpoints: round 0's labels (the first), then one a validation; stops after the first (no
    # validation yet: its labels are read back, not collected again) and after the fourth (round 1,
    # after its labels and first epoch)
    for stop_at, out in ((1, "b"), (4, "c")):
        calls = []

        def ctrl_c_after(*a, stop_at=stop_at, calls=calls, **k):  # noqa: ANN002, ANN003, ANN202
            save(*a, **k)
            calls.append(1)
            if len(calls) == stop_at:
                signal.raise_signal(signal.SIGINT)

        monkeypatch.setattr(checkpoint, "save_imitation", ctrl_c_after)
        assert imitate.main([*args, "--out", str(tmp_path / out)]) == 130
        said = capsys.readouterr()
        assert "--resume" in said.err and ("epoch" not in said.out) == (stop_at == 1), said.out
        monkeypatch.setattr(checkpoint, "save_imitation", save)
        with monkeypatch.context() as m:
            if stop_at == 1:  # round 0's labels come from labels/ (round 1's are collected)
                m.setattr(imitate, "collect_parallel", _not_round_0)
            assert imitate.main([*args, "--out", str(tmp_path / out), "--resume"]) == 0
        capsys.readouterr()
        run_a, run_b = (tmp_path / x / "Zudecken-seed0" for x in ("a", out))
        a, b = (load_model(r / "model.zip", "maskable_ppo", ZU).policy.state_dict() for r in (run_a, run_b))
        assert all(torch.equal(a[k], b[k]) for k in a)
        rounds_a, rounds_b = (json.loads((r / "rounds.json").read_text()) for r in (run_a, run_b))
        for row in (*rounds_a, *rounds_b):
            row.pop("seconds")
        assert rounds_a == rounds_b and len(rounds_a) == 4
        assert not (run_b / "checkpoint.npz").exists()


#: Crafted meta of an imitation checkpoint (its checksum recomputed), each refused.
CRAFTED = [{"round": "x"}, {"epoch": 10**12}, {"best": 7.0}, {"rounds": "abc"}, {"rounds": [{"round": 0}]},
           {"labels_made": [1]}, {"round": -1}]  # fmt: skip


def test_a_crafted_imitation_checkpoint_is_one_line_and_trains_nothing(tmp_path, monkeypatch, capsys):
    """Its meta changed and its checksum recomputed (a string round, an epoch past the last, ...):
    refused in one line (exit 2) before any training, not a traceback, nor a run that skips its
    epochs and calls itself finished."""
    from quadrat_env.experiments.common import checkpoint
    from quadrat_env.experiments.zudecken import imitate

    args = ["--rounds", "1", "--deals-per-round", "20", "--epochs", "2", "--eval-every", "1", "--jobs", "1",
            "--features", "zudecken", "--out", str(tmp_path)]  # fmt: skip
    save = checkpoint.save_imitation

    def stop_after_the_first_checkpoint(*a, **k):  # noqa: ANN002, ANN003, ANN202
        save(*a, **k)
        signal.raise_signal(signal.SIGTERM)

    monkeypatch.setattr(checkpoint, "save_imitation", stop_after_the_first_checkpoint)
    assert imitate.main(args) == 128 + signal.SIGTERM
    path = tmp_path / "Zudecken-seed0" / "checkpoint.npz"
    meta, arrays = checkpoint.load(path)
    monkeypatch.setattr(imitate, "fit", lambda *a, **k: pytest.fail("trained on a crafted checkpoint"))
    for change in CRAFTED:
        checkpoint.save(path, {**{k: v for k, v in meta.items() if k != "version"}, **change}, arrays)
        capsys.readouterr()
        assert imitate.main([*args, "--resume"]) == 2, change
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "not this run's checkpoint" in err[0] and "Traceback" not in err[0], err
        assert not (tmp_path / "Zudecken-seed0" / "rounds.json").exists()


def test_a_second_imitation_into_a_held_run_folder_is_one_line(tmp_path, capsys):
    from quadrat_env.experiments.zudecken import imitate

    from quadrat_env.files import exclusive_run

    argv = [
        "--seed",
        "0",
        "--rounds",
        "1",
        "--deals-per-round",
        "30",
        "--epochs",
        "1",
        "--out",
        str(tmp_path),
    ]
    with exclusive_run(tmp_path / "Zudecken-seed0"), pytest.raises(SystemExit) as stop:  # another run in it
        imitate.main(argv)
    assert stop.value.code == 2 and "another run is writing to" in capsys.readouterr().err
    assert not (tmp_path / "Zudecken-seed0").exists()
