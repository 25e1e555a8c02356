"""The one-ply lookahead's next positions are the rules' next positions, and it plays the network
where it is told to trust it."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from quadrat_env.agents.evaluate import evaluate
from quadrat_env.agents.sb3_agent import SB3Agent
from quadrat_env.agents.zudecken.lookahead import MOVES, LookaheadAgent

from quadrat_env.cards import PACKS
from quadrat_env.slots.kernel import GROUPS

ZU = "quadrat_env/Zudecken-v0"
MODEL = "experiments/models/Zudecken-rl.zip"
PACKS_MODELS = {52: (ZU, MODEL), 32: ("quadrat_env/Zudecken32-v0", "experiments/models/Zudecken32-rl.zip")}


@pytest.fixture(scope="module")
def network():
    agent = SB3Agent.load(MODEL, None, ZU)
    return agent, agent.model.policy.features_extractor


@pytest.fixture(scope="module", params=sorted(PACKS_MODELS))
def pack_network(request):
    env_id, path = PACKS_MODELS[request.param]
    return env_id, SB3Agent.load(path, None, env_id).model.policy.features_extractor


def _positions(seed: int, count: int, env_id: str = ZU):
    """Positions of a deal played by random legal moves: (actions so far, obs, state), the last
    ones late in the deal, where the stock runs out."""
    rng, env = np.random.default_rng(seed), gym.make(env_id)
    obs, info = env.reset(seed=seed)
    actions, out = [], []
    while True:
        out.append((list(actions), obs, env.unwrapped.state))
        legal = np.flatnonzero(info["action_mask"])
        actions.append(int(rng.choice(legal)))
        obs, _, term, trunc, info = env.step(actions[-1])
        if term or trunc:
            return out[-count:]


@pytest.mark.parametrize("seed", range(6))
def test_refills_and_next_values_are_the_rules_after_that_stock_order(pack_network, seed):
    env_id, net = pack_network
    agent = LookaheadAgent(net, samples=2)
    rng = np.random.default_rng(seed)
    index = {card: k for k, card in enumerate(PACKS[net.pack])}  # a card's place in the observation
    for actions, obs, state in _positions(seed, 6, env_id):
        for move in range(MOVES):
            if not net.scored_moves(torch.as_tensor(obs[None], dtype=torch.float32))[0, move]:
                continue
            stock = list(rng.permutation(state.deck[state.next :]))
            env = gym.make(env_id)
            env.reset(options={"deck": list(state.deck[: state.next]) + stock})
            for a in actions:  # the same cards so far: only the stock's order differs
                env.step(a)
            after, reward, term, _, info = env.step(move)
            first = [index[c] for c in stock]
            order = torch.tensor(first + [k for k in range(net.pack) if k not in first])[None, None]
            t = torch.as_tensor(obs[None], dtype=torch.float32)
            slots, rest = agent._refill(t[:, net.upcards].reshape(1, 4, net.pack), t[:, net.unseen], order,
                                        torch.tensor([move]))  # fmt: skip
            assert slots.flatten().tolist() == after[net.upcards].tolist(), (actions, move)
            assert rest.flatten().tolist() == after[net.unseen].tolist()
            nxt = torch.zeros(1, len(obs))
            nxt[:, net.upcards], nxt[:, net.unseen] = slots.reshape(1, -1), rest.reshape(1, -1)
            value = float(agent._best_next(nxt, slots.reshape(1, -1), rest.reshape(1, -1))[0])
            if term:
                assert value == reward  # the deal's outcome
            else:
                a = torch.as_tensor(after[None], dtype=torch.float32)
                legal = info["action_mask"][:MOVES].astype(bool)
                own = torch.sigmoid(net(a))[0, :MOVES].detach().numpy()
                assert value == pytest.approx(own[legal].max(), abs=1e-6)


def test_a_large_z_plays_the_networks_moves_and_a_small_one_leaves_them(network):
    agent, net = network
    deals = range(2_000_000, 2_000_048)
    _, mine = evaluate(ZU, agent, deals, progress=False, n_envs=16)
    trusting = LookaheadAgent(net, samples=4, z=1e9)
    _, looked = evaluate(ZU, trusting, deals, progress=False, n_envs=16)
    assert [e.won for e in looked] == [e.won for e in mine]
    assert [e.cards_left for e in looked] == [e.cards_left for e in mine]
    assert trusting.decisions > 100 and trusting.parted == 0
    doubting = LookaheadAgent(net, samples=4, z=0.0)
    evaluate(ZU, doubting, deals, progress=False, n_envs=16)
    assert doubting.parted > 0  # 4 draws a move: noisy enough to part somewhere


def test_sampled_values_are_nan_only_for_the_moves_that_are_not_legal(network):
    _, net = network
    agent = LookaheadAgent(net, samples=8)
    positions = _positions(7, 10)
    obs = torch.as_tensor(np.stack([o for _, o, _ in positions]), dtype=torch.float32)
    legal = net.scored_moves(obs)[:, :MOVES]
    values = agent.sampled_values(obs, legal)
    assert values.shape == (len(obs), len(GROUPS), 8)
    assert torch.equal(values.isnan().all(-1), ~legal) and not values[legal].isnan().any()
    assert ((values[legal] >= 0) & (values[legal] <= 1)).all()


@pytest.mark.parametrize("kwargs", [{"samples": 1}, {"samples": 2.5}, {"z": -1.0}, {"z": float("nan")}])
def test_bad_settings_are_refused(network, kwargs):
    with pytest.raises(ValueError, match="samples|z"):
        LookaheadAgent(network[1], **kwargs)


def test_the_command_records_both_players_per_deal_and_joins_records_of_consecutive_deals(tmp_path):
    import json

    from quadrat_env.experiments.zudecken import lookahead

    common = ["--model", MODEL, "--deals", "12", "--samples", "2", "--z", "0", "--no-progress"]
    for offset in ("0", "12"):
        assert lookahead.main([*common, "--offset", offset, "--out", str(tmp_path / "parts")]) == 0
    parts = sorted((tmp_path / "parts").glob("*.json"))
    assert [p.name for p in parts] == ["lookahead-Zudecken-rl-s2-z0-from2000000.json",
                                       "lookahead-Zudecken-rl-s2-z0-from2000012.json"]  # fmt: skip
    assert lookahead.main(["--merge", *map(str, parts), "--out", str(tmp_path)]) == 0
    joined = json.loads((tmp_path / "lookahead-Zudecken-rl-s2-z0.json").read_text())
    assert lookahead.main([*common, "--deals", "24", "--out", str(tmp_path / "whole")]) == 0
    whole = json.loads((tmp_path / "whole" / "lookahead-Zudecken-rl-s2-z0.json").read_text())
    assert joined["won"]["network"] == whole["won"]["network"]  # the same deals, the same network
    assert joined["deals"] == 24 and joined["first_seed"] == 2_000_000
    a, b = (joined["won"][k] for k in ("network", "lookahead"))
    assert joined["network"]["wins"] == a.count("1") and joined["lookahead"]["wins"] == b.count("1")
    assert joined["only_lookahead"] == sum(x == "0" and y == "1" for x, y in zip(a, b, strict=True))
    assert "| lookahead |" in (tmp_path / "lookahead-Zudecken-rl-s2-z0.md").read_text()


def test_merge_refuses_records_of_other_settings_or_deals_out_of_order(tmp_path):
    import json

    from quadrat_env.experiments.zudecken.lookahead import merge

    base = {"env": ZU, "model": MODEL, "samples": 2, "z": 0.0, "seed": 0, "deals": 2, "first_seed": 10,
            "decisions_with_a_choice": 3, "decisions_parted": 1, "bias_sum": 0.1, "bias_count": 4,
            "seconds": {"network": 1.0, "lookahead": 2.0},
            "won": {"network": "10", "lookahead": "11"}}  # fmt: skip
    paths = [tmp_path / f"{i}.json" for i in range(3)]
    for path, change in zip(paths, ({}, {"first_seed": 12}, {"first_seed": 12, "samples": 4}), strict=True):
        path.write_text(json.dumps(base | change))
    assert merge(paths[:2])["lookahead"]["wins"] == 4
    with pytest.raises(ValueError, match="other settings"):
        merge([paths[0], paths[2]])
    with pytest.raises(ValueError, match="do not follow"):
        merge([paths[1], paths[0]])
