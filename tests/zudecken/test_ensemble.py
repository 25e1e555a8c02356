"""An ensemble of afterstate networks plays the move with the best mean value; its command plays
every network as the benchmark does, beside the ensemble, on the same deals."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
import torch
from quadrat_env.agents.evaluate import evaluate
from quadrat_env.agents.sb3_agent import SB3Agent
from quadrat_env.agents.zudecken.ensemble import EnsembleAgent
from quadrat_env.experiments.zudecken import ensemble as command

from quadrat_env import seeds

ZU, Z32 = "quadrat_env/Zudecken-v0", "quadrat_env/Zudecken32-v0"
MODELS = ["experiments/models/Zudecken-rl.zip", "experiments/models/seeds/Zudecken-rl-seed1.zip"]


@pytest.fixture(scope="module")
def nets():
    return [SB3Agent.load(path, None, ZU).model.policy.features_extractor for path in MODELS]


def _positions(count: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of deals played by random legal moves."""
    env, rng, obs, masks = gym.make(ZU), np.random.default_rng(0), [], []
    o, info = env.reset(seed=5)
    while len(obs) < count:
        obs.append(o), masks.append(info["action_mask"])
        o, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term or trunc:
            o, info = env.reset(seed=5 + len(obs))
    return np.array(obs), np.array(masks)


def test_the_move_has_the_best_mean_value_over_the_networks(nets):
    obs, masks = _positions()
    t = torch.as_tensor(obs, dtype=torch.float32)
    with torch.no_grad():
        values = [torch.sigmoid(net(t)).numpy().astype(np.float64) for net in nets]
        logits = [net(t).numpy().astype(np.float64) for net in nets]
    for average, each in (("probability", values), ("logit", logits)):
        actions = EnsembleAgent(nets, average).predict(obs, action_masks=masks)[0]
        mean = np.where(masks, (each[0] + each[1]) / 2, -np.inf)
        assert np.all(mean[np.arange(len(obs)), actions] >= mean.max(1) - 1e-6), average
    one = EnsembleAgent([nets[0], nets[0]], "logit").predict(obs, action_masks=masks)[0]
    with torch.no_grad():  # one network twice: its own best legal move
        own = nets[0](t).masked_fill(~torch.as_tensor(masks).bool(), -torch.inf).argmax(1).numpy()
    assert np.array_equal(one, own)
    assert EnsembleAgent(nets).predict(obs[0], action_masks=masks[0])[0] in np.flatnonzero(masks[0])


def test_what_is_no_ensemble_is_refused(nets):
    other = SB3Agent.load("experiments/models/Zudecken32-rl.zip", None, Z32).model.policy.features_extractor
    mlp = SB3Agent.load("experiments/models/Zudecken-ppo.zip", None, ZU).model.policy.features_extractor
    for bad, why in (([nets[0]], "at least two"), ([nets[0], other], "other packs"),
                     ([nets[0], mlp], "score afterstates")):  # fmt: skip
        with pytest.raises(ValueError, match=why):
            EnsembleAgent(bad)
    with pytest.raises(ValueError, match="average"):
        EnsembleAgent(nets, "median")
    with pytest.raises(ValueError, match="action_masks"):
        EnsembleAgent(nets).predict(np.zeros((1, 269), np.float32))


def test_the_command_records_each_network_as_the_benchmark_plays_it(tmp_path, capsys):
    args = ["--models", *MODELS, "--deals", "40", "--held-out", "--out", str(tmp_path), "--no-progress"]
    assert command.main(args) == 0
    record = json.loads((tmp_path / "ensemble-Zudecken-rl-2-probability-held-out.json").read_text())
    deals = seeds.BENCHMARK.take(40)
    for path in MODELS:  # each network wins exactly the deals it wins when played alone
        _, episodes = evaluate(ZU, SB3Agent.load(path, None, ZU), deals, progress=False, n_envs=1024)
        assert record["players"][path]["won"] == "".join("1" if e.won else "0" for e in episodes)
    _, episodes = evaluate(ZU, EnsembleAgent(_nets()), deals, progress=False, n_envs=1024)
    assert record["players"]["ensemble"]["won"] == "".join("1" if e.won else "0" for e in episodes)
    best, ens = (np.array([c == "1" for c in record["players"][k]["won"]]) for k in (record["best_network"],
                                                                                     "ensemble"))  # fmt: skip
    assert (record["only_best_network"], record["only_ensemble"]) == (
        (best & ~ens).sum(),
        (ens & ~best).sum(),
    )
    assert "ensemble" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stop:  # the record is not replaced unless asked
        command.main(args)
    assert stop.value.code == 2


def _nets() -> list[torch.nn.Module]:
    return [SB3Agent.load(path, None, ZU).model.policy.features_extractor for path in MODELS]
