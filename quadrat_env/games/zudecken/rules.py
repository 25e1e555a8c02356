"""Zudecken's rules: Quadrat's four-slot engine, with cards matching in suit or rank."""

from __future__ import annotations

import numpy as np

from quadrat_env.cards import PACKS, ranks_pack
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


def zudecken(win: str = "cleared", cover: str = "groups", n_cards: int | None = None,
             ranks: int | None = None) -> ZudeckenRules:  # fmt: skip
    """Zudecken: cover groups whose cards match in suit or rank, from a pack of four suits of the
    ``ranks`` highest ranks (4..13; ``n_cards`` = 4 x ``ranks``; default 13 ranks, 52 cards)."""
    if not isinstance(win, str) or win not in WINS:
        raise ValueError(f"win must be 'cleared' or 'dealt', got {win!r}")
    if not isinstance(cover, str) or cover not in COVERS:
        raise ValueError(f"cover must be 'groups' or 'pairs', got {cover!r}")
    size = pack_size(n_cards, ranks)
    name = "Zudecken" if size == 52 else f"Zudecken{size}"
    return ZudeckenRules(name, size, match_rank=True, max_group=2 if cover == "pairs" else 4,
                         win_needs_clear=win == "cleared", num_moves=len(GROUPS))  # fmt: skip


def pack_size(n_cards: int | None, ranks: int | None) -> int:
    """The pack size that ``n_cards`` or ``ranks`` (or both, if they agree) name; 52 if neither."""
    if ranks is not None:
        size = len(ranks_pack(whole("ranks", ranks)))  # four suits; checks the range
        if n_cards is not None and whole("n_cards", n_cards) != size:
            raise ValueError(f"n_cards={n_cards!r} and ranks={ranks!r} disagree: {ranks!r} ranks a "
                             f"suit make {size} cards; give one of them")  # fmt: skip
        return size
    size = 52 if n_cards is None else whole("n_cards", n_cards)
    if size not in PACKS:
        raise ValueError(f"n_cards must be 4 x ranks for 4..13 ranks ({', '.join(map(str, PACKS))}), "
                         f"got {n_cards!r}")  # fmt: skip
    return size
