"""A planner that plays from what a player sees: perfect-information Monte Carlo over the unseen cards.

At each decision with a choice it asks the game for a state that agrees with the observation, with
the unseen cards in a random order (``game.determinize``; never the true stock order), lets the
exact solver decide for every legal move whether that sampled deal can still be won, and plays the
move that wins in the most samples. Ties go to the game's greedy rule (Zudecken: largest group,
then lowest action).

Games whose greedy rule is optimal (``GameSpec.greedy_is_optimal``; Quadrille) need no sampling:
the planner plays it. ``time_budget`` (seconds per decision) stops sampling early.
"""

from __future__ import annotations

import time

import numpy as np
from quadrat_env.agents.base import Agent, legal
from quadrat_env.agents.greedy import rules_of
from quadrat_env.agents.solver import Solver

from quadrat_env.registry import spec_for

#: Sampled deals solved per compiled call.
BATCH = 16
#: Samples per decision by default: chosen on the planner curve's deals (not the benchmark's),
#: where 128 won 24.5% against 20.4% for 32, at about 5 ms a decision (README, planner curve).
SAMPLES = 128


class PlannerAgent(Agent):
    name = "planner"

    def __init__(
        self, env_id: str, samples: int = SAMPLES, time_budget: float = 1.0, seed: int | None = 0
    ) -> None:
        if samples < 1:
            raise ValueError(f"samples must be >= 1, got {samples!r}")
        if not time_budget > 0:
            raise ValueError(f"time_budget must be > 0 seconds, got {time_budget!r}")
        self.env_id, self.game = env_id, rules_of(env_id)
        self.greedy_only = spec_for(env_id).greedy_is_optimal
        self.solver = None if self.greedy_only else Solver(self.game)
        self.samples, self.time_budget = samples, time_budget
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, mask: np.ndarray) -> int:
        moves = legal(mask)
        if self.greedy_only:
            return self.game.greedy(mask)
        if len(moves) == 1:
            return int(moves[0])
        wins = np.zeros(len(moves), dtype=np.int64)
        deadline = time.perf_counter() + self.time_budget
        done = 0
        while done < self.samples:  # in batches, so the time budget is checked now and then
            batch = min(BATCH, self.samples - done)
            worlds = self.game.determinize_many(observation, self.rng, batch)
            wins += self.solver.wins_after(worlds, moves).sum(axis=0)  # type: ignore[union-attr]
            done += batch
            if time.perf_counter() > deadline:
                break
        tie_mask = np.zeros_like(mask)
        tie_mask[moves[wins == wins.max()]] = 1
        return self.game.greedy(tie_mask)
