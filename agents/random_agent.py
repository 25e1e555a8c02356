"""Uniformly random legal play."""

from __future__ import annotations

import numpy as np
from quadrat_env.agents.base import Agent, legal


class RandomAgent(Agent):
    """Picks uniformly among the legal actions, from its own seeded generator."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, mask: np.ndarray) -> int:
        return int(self.rng.choice(legal(mask)))
