"""The hand rule for the four-slot games: keep the upcards that many unseen cards still match.

A player covering cards in Zudecken looks at what stays on the table: an upcard that many unseen cards
match (same suit or same rank) is likely to find a partner later; one that nothing unseen matches is a
dead weight. So, among the legal moves, this rule plays the one whose remaining upcards have the most
unseen partners (read off the observation's ``suit_match`` and ``rank_match`` pieces), ties going to
the larger group, then to the lower action. It never reads the stock order.
"""

from __future__ import annotations

import numpy as np
from quadrat_env.agents.base import Agent, legal

from quadrat_env.registry import rules_for
from quadrat_env.slots.kernel import GROUPS, NUM_SLOTS


class HandRuleAgent(Agent):
    name = "hand rule"

    def __init__(self, env_id: str) -> None:
        self.env_id, self.game = env_id, rules_for(env_id)
        layout = self.game.layout
        if "suit_match" not in layout or "upcards" not in layout:
            raise ValueError(f"the hand rule reads four upcards and their unseen matches; {env_id!r} has "
                             f"no such observation pieces")  # fmt: skip
        per_suit = self.game.pack_size // 4 - 1
        self.suit = layout["suit_match"].slice
        self.rank = layout["rank_match"].slice if "rank_match" in layout else None
        self.scale = (per_suit, 3)  # the observation divides the counts by these

    def partners(self, observation: np.ndarray) -> np.ndarray:
        """Per slot: how many unseen cards match its upcard (0 for an empty slot)."""
        count = np.asarray(observation)[self.suit] * self.scale[0]
        if self.rank is not None:
            count = count + np.asarray(observation)[self.rank] * self.scale[1]
        return np.rint(count)

    def act(self, observation: np.ndarray, mask: np.ndarray) -> int:
        moves = legal(mask)
        if len(moves) == 1 or moves[-1] >= self.game.num_moves:  # only "end" (or one move) is left
            return int(moves[0])
        partners = self.partners(observation)
        kept = [partners[[s for s in range(NUM_SLOTS) if s not in GROUPS[m]]].sum() for m in moves]
        best = max(range(len(moves)), key=lambda i: (kept[i], len(GROUPS[moves[i]]), -moves[i]))
        return int(moves[best])
