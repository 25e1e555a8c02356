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
