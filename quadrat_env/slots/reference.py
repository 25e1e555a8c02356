"""The readable reference rules of Quadrat and Zudecken, the test oracle of the compiled rules.

The env, the batched env, the solver and the planner run ``quadrat_env.slots.kernel``;
the tests play this module side by side with it and require the same states, moves and
observations. Four upcards over a stock; a move takes away a group of matching upcards.

Both games share this engine; how they differ is tabled in ``quadrat_env.slots.rules``.

Each upcard taken away receives the next stock card, slots in ascending order; once the stock is
used up the slot stays empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, cached_property

import numpy as np

from quadrat_env.cards import PACKS, check_pack, format_cards
from quadrat_env.core.rules import IllegalMove
from quadrat_env.slots.kernel import EMPTY, GROUPS, MOVES_UP_TO, NUM_PAIRS
from quadrat_env.slots.rules import SlotState

_PAIR_SLOTS = GROUPS[:NUM_PAIRS]
_GROUP_BITS = tuple((g, sum(1 << i for i in g)) for g in GROUPS)
#: _MATCH[match_rank][a][b]: 1 if cards a and b match (same suit, or also same rank), else 0.
#: Index 52 (reached as -1, i.e. ``EMPTY``) is an empty slot, which matches nothing.
_MATCH = tuple(
    tuple(
        tuple(int(a < 52 and b < 52 and (a // 13 == b // 13 or (by_rank and a % 13 == b % 13)))
              for b in range(53))
        for a in range(53)
    )
    for by_rank in (False, True)
)  # fmt: skip


@dataclass(frozen=True)
class SlotGame:
    """One variant of the four-slot game; see ``QUADRAT``-style factories below."""

    name: str
    pack_size: int
    match_rank: bool  # Zudecken: a card also matches one of the same rank
    max_group: int  # largest group one move may take away (2 = pairs only)
    win_needs_clear: bool  # won needs the table empty, not only the stock used up
    num_moves: int  # 6 (Quadrat) or 11 (Zudecken)

    def start(self, deck: Sequence[int]) -> SlotState:
        deck = tuple(deck)
        check_pack(deck, self.pack_size)
        return SlotState(deck, 4, (deck[0], deck[1], deck[2], deck[3]))

    def legal_moves(self, state: SlotState) -> tuple[int, ...]:
        # Which of the six slot pairs match decides every group: look the answer up by that
        # 6-bit pattern (empty slots match nothing).
        # Unrolled over the pairs of _PAIR_SLOTS (bit k = pair k): this is the hot path of search.
        a, b, c, d = state.slots
        t = _MATCH[self.match_rank]
        ta, tb, tc = t[a], t[b], t[c]
        pattern = ta[b] | ta[c] << 1 | ta[d] << 2 | tb[c] << 3 | tb[d] << 4 | tc[d] << 5
        return _legal_by_pattern(self._group_limit)[pattern]

    def play(self, state: SlotState, move: int) -> SlotState:
        if move not in self.legal_moves(state):
            shown = format_cards(c for c in state.slots if c != EMPTY) or "nothing"
            raise IllegalMove(
                f"{self.name}: move {move!r} is not legal with {shown} showing; "
                f"legal moves: {list(self.legal_moves(state))}"
            )
        return self.play_unchecked(state, move)

    def play_unchecked(self, state: SlotState, move: int) -> SlotState:
        """``play`` for a move known to be legal (searches that generated it skip the check)."""
        slots = list(state.slots)
        deck, nxt = state.deck, state.next
        for i in GROUPS[move]:  # ascending slot order: the lower slot is refilled first
            if nxt < len(deck):
                slots[i] = deck[nxt]
                nxt += 1
            else:
                slots[i] = EMPTY
        return SlotState(deck, nxt, (slots[0], slots[1], slots[2], slots[3]))

    @cached_property  # asked on every legal_moves call; a frozen dataclass still has a __dict__
    def _group_limit(self) -> int:
        # GROUPS is ordered by size: pairs are moves 0-5, triples 6-9, the four 10.
        return min(self.num_moves, MOVES_UP_TO[self.max_group])

    def is_over(self, state: SlotState) -> bool:
        return not self.legal_moves(state)

    def is_won(self, state: SlotState) -> bool:
        if state.next < len(state.deck) or not self.is_over(state):
            return False
        return not self.win_needs_clear or all(c == EMPTY for c in state.slots)

    def cards_left(self, state: SlotState) -> int:
        return len(state.deck) - state.next + 4 - state.slots.count(EMPTY)

    def unseen(self, state: SlotState) -> frozenset[int]:
        return frozenset(state.deck[state.next :])


@cache
def _legal_by_pattern(limit: int) -> tuple[tuple[int, ...], ...]:
    """For each 6-bit pattern of matching slot pairs: the legal moves among ``GROUPS[:limit]``.

    A group is legal when every slot in it matches another slot of the group.
    """
    out = []
    for pattern in range(64):
        adj = [0, 0, 0, 0]  # adj[i]: bitmask of the slots matching slot i
        for bit, (i, j) in enumerate(_PAIR_SLOTS):
            if pattern >> bit & 1:
                adj[i] |= 1 << j
                adj[j] |= 1 << i
        out.append(tuple(m for m, (group, bits) in enumerate(_GROUP_BITS[:limit])
                         if all(adj[i] & bits for i in group)))  # fmt: skip
    return tuple(out)


def quadrat(pack_size: int = 32) -> SlotGame:
    """Quadrat: lay off two upcards of one suit. Won iff the stock is used up."""
    return SlotGame(
        name="Quadrat" if pack_size == 32 else f"Quadrat{pack_size}",
        pack_size=pack_size,
        match_rank=False,
        max_group=2,
        win_needs_clear=False,
        num_moves=NUM_PAIRS,
    )


def zudecken(win: str = "cleared", cover: str = "groups") -> SlotGame:
    """Zudecken: cover groups whose cards match in suit or rank (52 cards)."""
    if win not in ("cleared", "dealt"):
        raise ValueError(f"win must be 'cleared' or 'dealt', got {win!r}")
    if cover not in ("groups", "pairs"):
        raise ValueError(f"cover must be 'groups' or 'pairs', got {cover!r}")
    return SlotGame(
        name="Zudecken",
        pack_size=52,
        match_rank=True,
        max_group=2 if cover == "pairs" else 4,
        win_needs_clear=win == "cleared",
        num_moves=len(GROUPS),
    )


def observe(state: SlotState, pack_size: int, rank_counts: bool) -> np.ndarray:
    """The observation of a state, computed from scratch (the layout of ``slot_layout``)."""
    p = pack_size
    index = np.full(52, -1, dtype=np.int64)
    index[list(PACKS[p])] = np.arange(p)
    obs = np.zeros(5 * p + (9 if rank_counts else 5), dtype=np.float32)
    unseen = state.deck[state.next :]
    if unseen:
        obs[4 * p + index[list(unseen)]] = 1.0
    obs[5 * p] = len(unseen) / (p - 4)
    suits = np.bincount([c // 13 for c in unseen], minlength=4)
    ranks = np.bincount([c % 13 for c in unseen], minlength=13)
    for i, c in enumerate(state.slots):
        if c == EMPTY:
            continue
        obs[i * p + index[c]] = 1.0
        obs[5 * p + 1 + i] = suits[c // 13] / (p // 4 - 1)
        if rank_counts:
            obs[5 * p + 5 + i] = ranks[c % 13] / 3
    return obs
