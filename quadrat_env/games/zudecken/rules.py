"""Zudecken's rules: Quadrat's four-slot engine, with cards matching in suit or rank."""

from __future__ import annotations

import numpy as np

from quadrat_env.cards import PACKS
from quadrat_env.core.checks import whole
from quadrat_env.slots.kernel import GROUPS
from quadrat_env.slots.rules import SlotRules

WINS = ("cleared", "dealt")
COVERS = ("groups", "pairs")
#: Group size per action; the "end" action (after the groups) counts as size 0.
GROUP_SIZE = np.array([len(g) for g in GROUPS] + [0])
#: Greedy priority: larger groups first, then the lower action.
_PRIORITY = GROUP_SIZE * 16 - np.arange(len(GROUP_SIZE))


class ZudeckenRules(SlotRules):
    verb = "cover"

    def greedy(self, mask: np.ndarray) -> int:
        """Cover the largest group, ties to the lowest action; "end" only when it is all there is."""
        return int(self.greedy_batch(np.asarray(mask)[None])[0])

    def greedy_batch(self, masks: np.ndarray) -> np.ndarray:
        return np.argmax(np.where(np.asarray(masks) == 1, _PRIORITY, np.iinfo(np.int64).min), axis=1)


def zudecken(win: str = "cleared", cover: str = "groups", n_cards: int = 52) -> ZudeckenRules:
    """Zudecken: cover groups whose cards match in suit or rank (52 cards, or the 32-card Skat pack)."""
    if not isinstance(win, str) or win not in WINS:
        raise ValueError(f"win must be 'cleared' or 'dealt', got {win!r}")
    if not isinstance(cover, str) or cover not in COVERS:
        raise ValueError(f"cover must be 'groups' or 'pairs', got {cover!r}")
    n_cards = whole("n_cards", n_cards)
    if n_cards not in PACKS:
        raise ValueError(f"n_cards must be 32 or 52, got {n_cards!r}")
    name = "Zudecken" if n_cards == 52 else f"Zudecken{n_cards}"
    return ZudeckenRules(name, n_cards, match_rank=True, max_group=2 if cover == "pairs" else 4,
                         win_needs_clear=win == "cleared", num_moves=len(GROUPS))  # fmt: skip
