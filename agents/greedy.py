"""The greedy agent: each game's own greedy rule, read off the legal-action mask alone.

The rules live with the games (``rules_for(env_id).greedy``):

| game      | rule                                                                          |
|-----------|-------------------------------------------------------------------------------|
| Quadrat   | lay off the first legal pair (lowest action); no choice changes the outcome  |
| Zudecken  | cover the largest group, ties to the lowest action; "end" only when alone    |
| Quadrille | put the discard top on the first pile it fits (lowest action 1-12), else deal |

Known strength over seeded deals (README; ``tests/agents/test_agents.py`` checks it): Quadrat about 22%,
Quadrat52 about 5%, Zudecken about 5%, Quadrille about 59% (always playing is optimal there).
"""

from __future__ import annotations

import numpy as np
from quadrat_env.agents.base import Agent

from quadrat_env.registry import rules_for


class GreedyAgent(Agent):
    """The greedy rule of the game behind ``env_id`` (any registered variant of it)."""

    name = "greedy"

    def __init__(self, env_id: str) -> None:
        self.env_id = env_id
        self.game = rules_for(env_id)

    def act(self, observation: np.ndarray, mask: np.ndarray) -> int:
        return self.game.greedy(mask)

    def act_batch(self, masks: np.ndarray) -> np.ndarray:
        """The rule for a batch of masks at once (shape (n, actions))."""
        return self.game.greedy_batch(masks)

    def __repr__(self) -> str:
        return f"GreedyAgent({self.env_id!r})"
