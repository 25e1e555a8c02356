"""Upper bounds on how often any player can win a game, computed with the exact solver.

* ``clairvoyant``: the solver knows the stock order from the start. No player can do better.
* ``one_level``: the player must make the first real decision (the first position with more
  than one legal move; forced moves before it are the same for everyone) knowing only what it sees,
  and becomes clairvoyant after that. Per deal the bound is ``max over moves m of P(the clairvoyant
  solver wins after m | what the player sees)``, the probability estimated over ``samples`` random
  orders of the unseen cards (the true order is never read). For every player, the first decision
  can do no better than this, and what follows no better than clairvoyance, so the mean over deals
  bounds the optimum from above and lies below the clairvoyant bound. Sampling biases each deal's
  maximum slightly upward, which keeps it a bound.

Both return per-deal values in ``[0, 1]`` (clairvoyant: 0 or 1), in the order of ``seeds``.
"""

from __future__ import annotations

from collections.abc import Iterable

import gymnasium as gym
import numpy as np
from quadrat_env.agents.solver import Solver


def clairvoyant(env_id: str, seeds: Iterable[int]) -> list[float]:
    """1.0 for each deal the solver wins with the stock order known, else 0.0."""
    env = gym.make(env_id).unwrapped
    solver, rows = Solver(env.game), []
    for seed in seeds:
        env.reset(seed=seed)
        rows.append(env.game.to_row(env.state))
    return [float(w) for w in solver.winnable(np.array(rows))] if rows else []


def one_level(env_id: str, seeds: Iterable[int], samples: int = 1024, seed: int = 0) -> list[float]:
    """Per deal: the best first decision's chance of a clairvoyant win, over sampled unseen orders."""
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples!r}")
    env = gym.make(env_id).unwrapped
    game = env.game
    if game.greedy_is_optimal or game.kernel.wins_after is None:
        raise ValueError(f"{env_id}: no search to bound with (its greedy rule is optimal)")
    solver, rng = Solver(game), np.random.default_rng(seed)
    return [first_decision_value(env, *env.reset(seed=deal), solver, rng, samples) for deal in seeds]


def first_decision_value(env: gym.Env, obs: np.ndarray, info: dict, solver: Solver, rng: np.random.Generator,
                         samples: int) -> float:  # fmt: skip
    """From a deal just dealt in ``env`` (unwrapped): play the forced moves, then return the best move's
    share of sampled unseen orders that the solver still wins (or the result, if no choice comes)."""
    while True:
        moves = np.flatnonzero(info["action_mask"])
        if len(moves) == 0:  # over before any choice: every player gets the same result
            return float(info["won"])
        if len(moves) > 1:
            worlds = env.game.determinize_many(obs, rng, samples)
            return float(solver.wins_after(worlds, moves).mean(axis=0).max())
        obs, _, _, _, info = env.step(int(moves[0]))
