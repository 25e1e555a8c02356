"""Quadrille's rules (Captive Queens): settings, readable states, moves in words, the greedy rule."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from quadrat_env.cards import card_symbol
from quadrat_env.core.checks import whole
from quadrat_env.core.rules import Rules
from quadrat_env.games.quadrille import kernel as k
from quadrat_env.games.quadrille.kernel import EMPTY, NUM_PILES

#: Moves 1-12 put the discard top on these piles.
PILE_NAMES = (
    "centre N", "centre E", "centre S", "centre W",
    "compass N", "compass E", "compass S", "compass W",
    "corner NE", "corner SE", "corner SW", "corner NW",
)  # fmt: skip


class QuadrilleState(NamedTuple):
    #: Cards still to deal this pass, top first.
    hand: tuple[int, ...]
    #: The discard pile in the order dealt; the top is the last card.
    discard: tuple[int, ...]
    #: Top card of each of the twelve piles, ``EMPTY`` if the pile is empty.
    piles: tuple[int, ...]
    redeals_left: int


class QuadrilleRules(Rules[QuadrilleState]):
    kernel = k.KERNEL
    state_size = k.STATE_SIZE
    layout = k.LAYOUT
    name = "Quadrille"
    pack_size = k.PACK
    # A card fits one kind of pile only, and playing it never covers anything.
    greedy_is_optimal = True
    num_moves = 1 + NUM_PILES

    def __init__(self, redeals: int = 2) -> None:
        self.redeals = redeals = whole("redeals", redeals, minimum=0)
        self.params = np.array([redeals], dtype=np.int64)

    def to_row(self, state: QuadrilleState) -> np.ndarray:
        row = np.zeros(k.STATE_SIZE, dtype=np.int64)
        hand, discard = state.hand, state.discard
        row[k.SEQ : k.SEQ + len(hand)] = hand
        row[k.STACK : k.STACK + len(discard)] = discard
        row[k.POS], row[k.HLEN], row[k.DCOUNT], row[k.LEFT] = 0, len(hand), len(discard), state.redeals_left
        row[k.PILES : k.PILES + NUM_PILES] = state.piles
        return row

    def view(self, row: np.ndarray) -> QuadrilleState:
        v = row.tolist()
        hand = tuple(v[k.SEQ + v[k.POS] : k.SEQ + v[k.HLEN]])
        discard = tuple(v[k.STACK : k.STACK + v[k.DCOUNT]])
        return QuadrilleState(hand, discard, tuple(v[k.PILES : k.PILES + NUM_PILES]), v[k.LEFT])

    def unseen(self, state: QuadrilleState) -> frozenset[int]:
        # Only the first pass deals unseen cards; after a redeal the hand is the old discard pile.
        return frozenset(state.hand) if state.redeals_left == self.redeals else frozenset()

    def describe(self, state: QuadrilleState, move: int) -> str:
        if move == k.DEAL:
            return "deal" if state.hand else "redeal (turn the discard pile over)"
        return f"play {card_symbol(state.discard[-1])} to {PILE_NAMES[move - 1]}"

    def greedy(self, mask: np.ndarray) -> int:
        """Put the discard top on the first pile it fits (lowest action 1-12), else deal.
        Optimal: a card fits only one kind of pile, and playing it never covers anything."""
        plays = np.flatnonzero(np.asarray(mask)[1:]) + 1
        return int(plays[0]) if plays.size else k.DEAL

    def greedy_batch(self, masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(masks)
        plays = masks[:, 1:] == 1
        return np.where(plays.any(axis=1), np.argmax(plays, axis=1) + 1, k.DEAL)


__all__ = ["EMPTY", "QuadrilleRules", "QuadrilleState"]
