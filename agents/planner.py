"""A planner that plays from what a player sees: perfect-information Monte Carlo over the unseen cards.

At each decision with a choice it asks the game for a state that agrees with the observation, with
the unseen cards in a random order (``game.determinize``; never the true stock order), lets the
exact solver decide for every legal move whether that sampled deal can still be won, and plays the
move that wins in the most samples. Ties go to the game's greedy rule (Zudecken: largest group,
then lowest action).

Games whose greedy rule is optimal (``Rules.greedy_is_optimal``; Quadrille) need no sampling:
the planner plays it. ``time_budget`` (seconds per decision) stops sampling early, which makes the
moves depend on the machine's speed; ``cut_short`` counts the decisions it ended. By default
(``adaptive=True``) sampling goes on in batches only while the two leading moves are not yet told
apart (``settled``), up to ``samples``: more samples where the decision is close.
"""

from __future__ import annotations

import time

import numpy as np
from quadrat_env.agents.base import Agent, legal
from quadrat_env.agents.solver import Solver

from quadrat_env.registry import rules_for

#: Sampled deals solved per compiled call; the stopping rule is checked after each batch.
BATCH = 64
#: Samples per decision at most, by default. With ``ADAPTIVE`` most decisions stop well before:
#: chosen on the planner curve's deals (not the benchmark's): on 3,000 of them, up to 1,024 samples
#: with the stopping rule won 26.57% against 25.37% for a fixed 256 (paired: 289 deals won only by
#: it, 253 only by the fixed 256; z = 1.5, so a lean, not a proof). On the benchmark's 1,000 deals
#: of 52 cards it takes 6.1 ms a decision alone on one core (``results/planner_speed/``), more
#: beside other work; the benchmark reports each run's figure (``benchmark.md``).
SAMPLES = 1024
#: Stop sampling once the stopping rule says a decision is settled: more samples where it is close.
ADAPTIVE = True
#: Samples before the stopping rule may end a decision.
MIN_SAMPLES = 64
#: Stop when the leading move beats the runner-up by this many standard errors (sign test over the
#: samples where exactly one of the two wins).
Z = 3.0


class PlannerAgent(Agent):
    name = "planner"

    def __init__(self, env_id: str, samples: int = SAMPLES, time_budget: float = 1.0, seed: int | None = 0,
                 adaptive: bool = ADAPTIVE) -> None:  # fmt: skip
        if samples < 1:
            raise ValueError(f"samples must be >= 1, got {samples!r}")
        if not time_budget > 0:
            raise ValueError(f"time_budget must be > 0 seconds, got {time_budget!r}")
        self.env_id, self.game = env_id, rules_for(env_id)
        self.greedy_only = self.game.greedy_is_optimal
        self.solver = None if self.greedy_only else Solver(self.game)
        self.samples, self.time_budget, self.adaptive = samples, time_budget, adaptive
        self.rng = np.random.default_rng(seed)
        self.sampled = 0  # samples drawn over the agent's life (for cost reports)
        # decisions the time budget ended before the stopping rule or ``samples`` did: each one makes a
        # run depend on the machine's speed (its later samples come from a shifted random stream)
        self.cut_short = 0

    def act(self, observation: np.ndarray, mask: np.ndarray) -> int:
        moves = legal(mask)
        if self.greedy_only:
            return self.game.greedy(mask)
        if len(moves) == 1:
            return int(moves[0])
        outcomes = np.zeros((self.samples, len(moves)), dtype=np.bool_)
        deadline = time.perf_counter() + self.time_budget
        done = 0
        while done < self.samples:  # in batches, checking the stopping rule and the time budget
            batch = min(BATCH, self.samples - done)
            worlds = self.game.determinize_many(observation, self.rng, batch)
            outcomes[done : done + batch] = self.solver.wins_after(worlds, moves)  # type: ignore[union-attr]
            done += batch
            enough = self.adaptive and done >= MIN_SAMPLES and settled(outcomes[:done])
            if enough:
                break
            if time.perf_counter() > deadline:
                self.cut_short += done < self.samples
                break
        self.sampled += done
        wins = outcomes[:done].sum(axis=0)
        tie_mask = np.zeros_like(mask)
        tie_mask[moves[wins == wins.max()]] = 1
        return self.game.greedy(tie_mask)


def settled(outcomes: np.ndarray) -> bool:
    """Do the samples so far already name the move more samples would pick? Yes when the two
    leading moves win in exactly the same samples (more samples rarely tell them apart), or when
    the leader's extra wins over the runner-up pass a sign test at ``Z`` standard errors."""
    wins = outcomes.sum(axis=0)
    first, second = np.argsort(-wins, kind="stable")[:2]
    split = np.count_nonzero(outcomes[:, first] != outcomes[:, second])
    return split == 0 or wins[first] - wins[second] >= Z * np.sqrt(split)
