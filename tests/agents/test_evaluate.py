"""Evaluation on the native batched env gives exactly the per-deal results of single envs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from quadrat_env.agents import GreedyAgent, RandomAgent, evaluate
from quadrat_env.agents.base import Agent
from quadrat_env.agents.sb3_agent import SB3Agent

import quadrat_env
from quadrat_env.registry import short_name

MODELS = Path(__file__).resolve().parents[2] / "experiments" / "models"
DEALS = range(10**9, 10**9 + 300)  # the benchmark's first held-out deals


def agents(env_id: str) -> list:
    """Greedy, random, and the committed models of the ID (an ID may have none yet)."""
    name = short_name(env_id)
    shipped = [(MODELS / f"{name}-{algo}.zip", algo) for algo in ("maskable_ppo", "ppo")]
    loaders = [lambda p=p, a=a: SB3Agent.load(p, a, env_id) for p, a in shipped if p.is_file()]
    return [lambda: GreedyAgent(env_id), lambda: RandomAgent(seed=7), *loaders]


@pytest.mark.parametrize("env_id", quadrat_env.ENV_IDS)
def test_batched_evaluation_matches_single_envs_deal_by_deal(env_id):
    wins = 0
    for make in agents(env_id):
        # the same predict calls in the same order: even the random agent's draws line up
        _, single = evaluate(env_id, make(), DEALS, progress=False, n_envs=16, batched=False)
        _, batched = evaluate(env_id, make(), DEALS, progress=False, n_envs=16, batched=True)
        assert batched == single
        wins += sum(e.won for e in single)
    assert wins > 0  # the comparison covered won deals too


def test_deterministic_results_do_not_depend_on_the_batch():
    zu = "quadrat_env/Zudecken-v0"
    results = [evaluate(zu, GreedyAgent(zu), DEALS, progress=False, n_envs=n)[1] for n in (1, 7, 300)]
    assert results[0] == results[1] == results[2]

    class Stubborn(Agent):
        """Plays the first illegal action there is, as an unmasked policy may."""

        name = "stubborn"

        def act(self, observation, mask):
            return int(np.flatnonzero(mask == 0)[0]) if (mask == 0).any() else int(np.flatnonzero(mask)[0])

    for batched in (False, True):  # a repeated illegal action is counted and ends the deal as lost
        stuck = evaluate(zu, Stubborn(), DEALS[:50], progress=False, batched=batched)[1]
        assert all(e.stuck and not e.won and e.illegal == 1 for e in stuck)


def test_outcomes_are_held_in_columns_so_many_deals_fit_in_memory():
    """About 38 bytes a deal (a list of Episode objects took about 1,300): 10^8 deals fit in 4 GB."""
    import tracemalloc

    from quadrat_env.agents.evaluate import Episodes
    from quadrat_env.agents.random_agent import RandomAgent

    def held_after(deals: int) -> tuple[int, object, object]:  # what stays allocated with the results
        tracemalloc.start()
        summary, episodes = evaluate("quadrat_env/Quadrat-v0", RandomAgent(seed=0), range(deals),
                                     progress=False, n_envs=256)  # fmt: skip
        held = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        return held, summary, episodes

    held_after(300)  # what the first run allocates once and keeps would count against the next
    small, _, _ = held_after(1_000)
    held, summary, episodes = held_after(4_000)  # measured: 38 bytes a deal, as with 5,000 and 15,000
    assert isinstance(episodes, Episodes) and (held - small) / 3_000 < 100
    assert summary.wins == sum(e.won for e in episodes) and episodes[5].seed == 5
    assert episodes[:3] == [episodes[0], episodes[1], episodes[2]] and list(episodes[:2]) == episodes[:2]


def test_quadrat_bench_refuses_more_deals_than_memory_holds_in_one_line(tmp_path):
    import subprocess
    import sys

    command = [sys.executable, "-m", "quadrat_env.experiments.compare", "--env", "Quadrat", "--agent",
               "random", "--deals", str(10**12), "--out", str(tmp_path / "b")]  # fmt: skip
    out = subprocess.run(command, capture_output=True, text=True)
    assert out.returncode == 2 and "GiB" in out.stderr and "lower --deals" in out.stderr
    assert "Traceback" not in out.stderr and not (tmp_path / "b").exists()


@pytest.mark.parametrize("algo", ["maskable_ppo", "ppo"])
def test_a_models_probabilities_are_its_policy_and_its_deterministic_move_is_their_argmax(algo):
    import gymnasium as gym

    env_id = "quadrat_env/Zudecken32-v0"
    agent, env = SB3Agent.load(MODELS / f"Zudecken32-{algo}.zip", algo, env_id), gym.make(env_id)
    choices = 0
    for deal in DEALS[:5]:
        obs, info = env.reset(seed=deal)
        done = False
        while not done:
            mask = info["action_mask"].astype(bool)
            probs = agent.probabilities(obs, mask)
            assert probs.shape == mask.shape and probs.sum() == pytest.approx(1, abs=1e-5)
            if algo == "maskable_ppo":  # masked: no probability on an illegal move
                assert (probs[~mask] == 0).all()
            move = agent.act(obs, mask)
            assert probs[move] == probs.max()
            choices += mask.sum() > 1
            obs, _, done, _, info = env.step(move)
    assert choices > 5
