"""The upper bounds: clairvoyant and one-level-exact, on the benchmark's kind of deals."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from quadrat_env.agents.bounds import clairvoyant, first_decision_value, one_level
from quadrat_env.agents.solver import Solver

ZU = "quadrat_env/Zudecken-v0"
DEALS = range(5000, 5060)


def test_one_level_lies_between_zero_and_the_clairvoyant_bound_per_deal():
    clair = clairvoyant(ZU, DEALS)
    one = one_level(ZU, DEALS, samples=64)
    assert len(one) == len(clair) == len(DEALS)
    for c, o in zip(clair, one, strict=True):
        assert 0.0 <= o <= 1.0 and c in (0.0, 1.0)
    # a deal the clairvoyant solver loses can still have a winnable sample, so only the means compare
    assert np.mean(one) <= np.mean(clair) + 0.05
    assert sum(o not in (0.0, 1.0) for o in one) > 10  # the first decisions are uncertain, not 0/1


def test_one_level_never_reads_the_unseen_order():
    """Decks that agree on what the player sees at the first decision get the same value."""
    env = gym.make(ZU).unwrapped
    solver, checked = Solver(env.game), 0
    for seed in DEALS[:20]:
        obs, info = env.reset(seed=seed)
        deck = list(env.deck)
        value = first_decision_value(env, obs, info, solver, np.random.default_rng(7), 32)
        seen = env.state.next  # cards dealt when the first decision came (or the deal ended)
        shuffled = deck[:seen] + list(np.random.default_rng(seed).permutation(deck[seen:]))
        obs, info = env.reset(options={"deck": shuffled})
        assert first_decision_value(env, obs, info, solver, np.random.default_rng(7), 32) == value
        checked += value not in (0.0, 1.0)
    assert checked > 3


def test_one_level_refuses_games_without_a_search_and_bad_samples():
    with pytest.raises(ValueError, match="samples"):
        one_level(ZU, DEALS, samples=0)
    with pytest.raises(ValueError, match="greedy rule is optimal"):
        one_level("quadrat_env/Quadrille-v0", DEALS)


def test_clairvoyant_matches_the_solver():
    env = gym.make(ZU).unwrapped
    solver = Solver(env.game)
    expected = []
    for seed in DEALS:
        env.reset(seed=seed)
        expected.append(float(solver.line(env.state) is not None))
    assert clairvoyant(ZU, DEALS) == expected
