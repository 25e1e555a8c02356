"""The four-slot engine that Quadrat and Zudecken vary: settings, states, layout.

Four upcards over a stock; a move takes away a group of matching upcards and refills their slots
from the stock, in ascending slot order. The variants differ in what matches, which group sizes
are allowed and what counts as a win:

========  =====================  ===========  ==========================================
game      cards match if         groups       won
========  =====================  ===========  ==========================================
Quadrat   same suit              pairs only   stock used up (32 cards: table cleared too)
Zudecken  same suit or same rank pairs, 3, 4  stock used up and table cleared (default)
========  =====================  ===========  ==========================================
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from quadrat_env.cards import PACKS, card_symbol
from quadrat_env.core.layout import Layout
from quadrat_env.core.rules import Rules
from quadrat_env.slots import kernel as k
from quadrat_env.slots.kernel import EMPTY, GROUPS, NUM_SLOTS


class SlotState(NamedTuple):
    deck: tuple[int, ...]
    #: Index in ``deck`` of the next stock card; the stock is ``deck[next:]``.
    next: int
    #: The four upcards (card numbers), ``EMPTY`` where a slot is empty.
    slots: tuple[int, int, int, int]

    @property
    def stock_size(self) -> int:
        return len(self.deck) - self.next


def slot_layout(pack_size: int, rank_counts: bool) -> Layout:
    """The observation of a four-slot game; ``P`` is the pack size, a card's index ``k`` its place
    in the pack (52 cards: ``suit*13 + rank``; the Skat pack A 7 8 9 T J Q K per suit)."""
    p = pack_size
    pieces = [
        ("upcards", NUM_SLOTS * p, f"slot `i` one-hot at `{p}*i + k`; all zero if the slot is empty"),
        ("unseen", p, "1 for each card still in the stock (its order is hidden)"),
        ("stock", 1, f"stock size / {p - NUM_SLOTS}"),
        ("suit_match", NUM_SLOTS, f"per slot: unseen cards of its suit / {p // 4 - 1}"),
    ]
    if rank_counts:
        pieces.append(("rank_match", NUM_SLOTS, "per slot: unseen cards of its rank / 3"))
    return Layout(*pieces)


class SlotRules(Rules[SlotState]):
    """One variant of the four-slot game (see the module docstring)."""

    kernel = k.KERNEL
    verb = "lay off"

    def __init__(self, name: str, pack_size: int, match_rank: bool, max_group: int,
                 win_needs_clear: bool, num_moves: int) -> None:  # fmt: skip
        self.name, self.pack_size, self.num_moves = name, pack_size, num_moves
        self.match_rank, self.max_group, self.win_needs_clear = match_rank, max_group, win_needs_clear
        self.state_size = k.state_size(pack_size)
        self.layout = slot_layout(pack_size, rank_counts=match_rank)
        lay = self.layout
        params = [0] * 9
        params[k.P_PACK], params[k.P_MATCH_RANK] = pack_size, int(match_rank)
        params[k.P_MOVES] = min(num_moves, k.MOVES_UP_TO[max_group])
        params[k.P_CLEAR], params[k.P_RANK_COUNTS] = int(win_needs_clear), int(match_rank)
        params[k.P_UNSEEN], params[k.P_STOCK] = lay["unseen"].start, lay["stock"].start
        params[k.P_SUIT_MATCH] = lay["suit_match"].start
        params[k.P_RANK_MATCH] = lay["rank_match"].start if "rank_match" in lay else 0
        self.params = np.array(params, dtype=np.int64)
        self.pack_cards = np.array(PACKS[pack_size], dtype=np.int64)
        # Try the largest groups first: a win usually comes from clearing many cards at once.
        self.search_order = tuple(sorted(range(num_moves), key=lambda m: -len(GROUPS[m])))
        self.max_moves = pack_size

    def to_row(self, state: SlotState) -> np.ndarray:
        row = np.zeros(self.state_size, dtype=np.int64)
        row[k.NEXT] = state.next
        row[k.SLOTS : k.SLOTS + NUM_SLOTS] = state.slots
        for c in state.deck[state.next :]:
            row[k.COUNTS + c // 13] += 1
            row[k.COUNTS + 4 + c % 13] += 1
        row[k.DECK : k.DECK + len(state.deck)] = state.deck
        return row

    def view(self, row: np.ndarray) -> SlotState:
        values = row.tolist()
        slots = values[k.SLOTS : k.SLOTS + NUM_SLOTS]
        return SlotState(tuple(values[k.DECK : k.DECK + self.pack_size]), values[k.NEXT], tuple(slots))  # type: ignore[arg-type]

    def unseen(self, state: SlotState) -> frozenset[int]:
        return frozenset(state.deck[state.next :])

    def describe(self, state: SlotState, move: int) -> str:
        slots = GROUPS[move]
        cards = " ".join(card_symbol(state.slots[i]) for i in slots)
        return f"{self.verb} slots {', '.join(map(str, slots))} ({cards})"

    def greedy(self, mask: np.ndarray) -> int:
        """Lay off the first legal pair (lowest action): in Quadrat no choice changes the outcome."""
        return int(np.flatnonzero(mask)[0])

    def greedy_batch(self, masks: np.ndarray) -> np.ndarray:
        return np.argmax(np.asarray(masks) == 1, axis=1)

    def determinize(self, observation: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The visible table with the unseen cards dealt in a random order: the deck is the cards
        gone by (pack order), then a permutation of the unseen ones."""
        state, unseen = self.decode(observation)
        order = tuple(int(c) for c in rng.permutation(unseen))
        return self.to_row(state._replace(deck=state.deck + order))

    def determinize_many(self, observation: np.ndarray, rng: np.random.Generator, count: int) -> np.ndarray:
        # The visible table is decoded once; each row differs only in the order of the unseen cards.
        state, unseen = self.decode(observation)
        row = self.to_row(state._replace(deck=state.deck + tuple(unseen.tolist())))
        rows = np.repeat(row[None], count, axis=0)
        start = k.DECK + state.next
        # each row shuffled on its own, in one call (a Python loop of permutations cost more than
        # the compiled solver that decides the sampled deals)
        rows[:, start : start + len(unseen)] = rng.permuted(rows[:, start : start + len(unseen)], axis=1)
        return rows

    def decode(self, observation: np.ndarray) -> tuple[SlotState, np.ndarray]:
        """The visible state, its ``deck`` holding only the cards gone by; and the unseen cards."""
        p, obs = self.pack_size, np.asarray(observation)
        up = obs[self.layout["upcards"].slice].reshape(NUM_SLOTS, p)
        slots = tuple(int(self.pack_cards[b.argmax()]) if b.max() > 0.5 else EMPTY for b in up)
        is_unseen = obs[self.layout["unseen"].slice] > 0.5
        unseen, seen = self.pack_cards[is_unseen], self.pack_cards[~is_unseen]
        return SlotState(tuple(int(c) for c in seen), len(seen), slots), unseen  # type: ignore[arg-type]
