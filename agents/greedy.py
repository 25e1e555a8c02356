"""A fair, natural greedy rule per game, read off the legal-action mask alone.

| game      | rule                                                                          |
|-----------|-------------------------------------------------------------------------------|
| Quadrat   | lay off the first legal pair (lowest action); no choice changes the outcome  |
| Zudecken  | cover the largest group, ties to the lowest action; "end" only when alone    |
| Quadrille | put the discard top on the first pile it fits (lowest action 1-12), else deal |

Known strength over seeded deals (README): Quadrat about 22%, Quadrat52 about 5%, Zudecken about
5%, Quadrille about 59% (always playing is optimal there).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from agents.base import Agent, legal
from quadrat_env.rules.slots import GROUPS

# Group size per Zudecken action; the "end" action (11) counts as size 0.
_GROUP_SIZE = np.array([len(g) for g in GROUPS] + [0])


def first_legal(mask: np.ndarray) -> int:
    return int(legal(mask)[0])


def largest_group(mask: np.ndarray) -> int:
    moves = legal(mask)
    return int(moves[np.argmax(_GROUP_SIZE[moves])])  # argmax takes the first, i.e. lowest, tie


def largest_group_batch(masks: np.ndarray) -> np.ndarray:
    """:func:`largest_group` for a batch of Zudecken masks (shape (n, 12)) at once."""
    priority = _GROUP_SIZE * 16 - np.arange(len(_GROUP_SIZE))  # larger first, then lower action
    return np.argmax(np.where(np.asarray(masks) == 1, priority, np.iinfo(np.int64).min), axis=1)


def play_else_deal(mask: np.ndarray) -> int:
    moves = legal(mask)
    plays = moves[moves > 0]
    return int(plays[0]) if plays.size else 0


RULES = {"QuadratEnv": first_legal, "ZudeckenEnv": largest_group, "QuadrilleEnv": play_else_deal}


class GreedyAgent(Agent):
    """The greedy rule of the game behind ``env_id`` (any registered variant of it)."""

    name = "greedy"

    def __init__(self, env_id: str) -> None:
        kind = type(gym.make(env_id).unwrapped).__name__
        if kind not in RULES:
            raise ValueError(f"no greedy rule for {env_id!r} ({kind}); known: {sorted(RULES)}")
        self.env_id = env_id
        self.rule = RULES[kind]

    def act(self, observation: np.ndarray, mask: np.ndarray) -> int:
        return self.rule(mask)

    def __repr__(self) -> str:
        return f"GreedyAgent({self.env_id!r})"
