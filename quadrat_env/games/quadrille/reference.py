"""The readable reference rules of Quadrille (Captive Queens), the test oracle of the compiled rules.

The env, the batched env and the agents run ``quadrat_env.games.quadrille.kernel``, whose tables
are built from each pile's sequence of ranks; this module states the rules again, independently, as
arithmetic on ranks (``accepts``, ``pile_size``). No production module imports it; the tests
play it side by side with the compiled rules and require the same states, moves and observations.

Twelve piles, all empty at the start; the whole deck is the hand. A deal turns the top card of the
hand onto the discard pile; only the discard top may be played.

=========  ==============  =====================================================
piles      first card      then, in the same suit
=========  ==============  =====================================================
centre 4   any queen       nothing (one queen each)
compass 4  any five        4 3 2 A, then the King on the Ace
corner 4   any six         7 8 9 T J
=========  ==============  =====================================================

When the hand is empty a redeal turns the discard pile over as the new hand, keeping its order (the
first card dealt is on top again). With two redeals there are three passes. The game is won when all
52 cards are on the piles, and lost when the hand is empty, no redeal is left and the discard top
fits nowhere.

Moves: 0 = deal (a redeal when the hand is empty); 1-4 discard top to centre N, E, S, W; 5-8 to
compass N, E, S, W; 9-12 to corner NE, SE, SW, NW.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from quadrat_env.cards import ACE, FIVE, JACK, KING, QUEEN, SIX, card_code, check_pack
from quadrat_env.core.rules import IllegalMove
from quadrat_env.games.quadrille.rules import QuadrilleState

EMPTY = -1
DEAL = 0
NUM_PILES = 12
CENTRE = range(0, 4)  # pile indices; move = pile + 1
COMPASS = range(4, 8)
CORNER = range(8, 12)
#: Cards a pile holds when its top card has this rank, per pile kind (for counting).
_COMPASS_DEPTH = {FIVE: 1, 3: 2, 2: 3, 1: 4, ACE: 5, KING: 6}
_CORNER_DEPTH = {SIX: 1, 6: 2, 7: 3, 8: 4, 9: 5, JACK: 6}


def accepts(pile: int, top: int, card: int) -> bool:
    """Whether ``card`` may go onto pile number ``pile`` whose top card is ``top``."""
    r = card % 13
    if pile in CENTRE:
        return top == EMPTY and r == QUEEN
    if top == EMPTY:
        return r == (FIVE if pile in COMPASS else SIX)
    if top // 13 != card // 13:
        return False
    t = top % 13
    if pile in COMPASS:  # 5 4 3 2 A K
        if t == ACE:
            return r == KING
        return ACE < t <= FIVE and r == t - 1  # a King on top takes nothing
    return r == t + 1 and t < JACK  # corner: 6 7 8 9 T J


def pile_size(pile: int, top: int) -> int:
    """How many cards a pile holds, read off its top card."""
    if top == EMPTY:
        return 0
    if pile in CENTRE:
        return 1
    return (_COMPASS_DEPTH if pile in COMPASS else _CORNER_DEPTH)[top % 13]


@dataclass(frozen=True)
class QuadrilleGame:
    redeals: int = 2
    name: str = "Quadrille"
    pack_size: int = 52
    num_moves: int = 1 + NUM_PILES

    def __post_init__(self) -> None:
        if isinstance(self.redeals, bool) or not isinstance(self.redeals, int) or self.redeals < 0:
            raise ValueError(f"redeals must be a whole number >= 0, got {self.redeals!r}")

    def start(self, deck: Sequence[int]) -> QuadrilleState:
        deck = tuple(deck)
        check_pack(deck, self.pack_size)
        return QuadrilleState(deck, (), (EMPTY,) * NUM_PILES, self.redeals)

    def legal_moves(self, state: QuadrilleState) -> tuple[int, ...]:
        moves = [DEAL] if self._can_deal(state) else []
        if state.discard:
            card = state.discard[-1]
            moves += [p + 1 for p, top in enumerate(state.piles) if accepts(p, top, card)]
        return tuple(moves)

    def play(self, state: QuadrilleState, move: int) -> QuadrilleState:
        hand, discard, piles, redeals_left = state
        if move == DEAL and self._can_deal(state):
            if hand:
                return QuadrilleState(hand[1:], discard + hand[:1], piles, redeals_left)
            return QuadrilleState(discard, (), piles, redeals_left - 1)
        if 1 <= move <= NUM_PILES and discard and accepts(move - 1, piles[move - 1], discard[-1]):
            new_piles = piles[: move - 1] + (discard[-1],) + piles[move:]
            return QuadrilleState(hand, discard[:-1], new_piles, redeals_left)
        top = card_code(discard[-1]) if discard else "nothing"
        raise IllegalMove(
            f"Quadrille: move {move!r} is not legal with {top} on the discard pile and "
            f"{len(hand)} cards in hand; legal moves: {list(self.legal_moves(state))}"
        )

    def play_unchecked(self, state: QuadrilleState, move: int) -> QuadrilleState:
        """``play`` for a move known to be legal (the check is cheap here, so it stays)."""
        return self.play(state, move)

    @staticmethod
    def _can_deal(state: QuadrilleState) -> bool:
        return bool(state.hand) or (state.redeals_left > 0 and bool(state.discard))

    def is_over(self, state: QuadrilleState) -> bool:
        return not self.legal_moves(state)

    def is_won(self, state: QuadrilleState) -> bool:
        return not state.hand and not state.discard

    def cards_left(self, state: QuadrilleState) -> int:
        return len(state.hand) + len(state.discard)

    def unseen(self, state: QuadrilleState) -> frozenset[int]:
        # Only the first pass deals unseen cards; after a redeal the hand is the old discard pile.
        return frozenset(state.hand) if state.redeals_left == self.redeals else frozenset()


def observe(state: QuadrilleState, redeals: int, layout: Any) -> np.ndarray:
    """The observation of a state, computed from scratch (``layout`` names the pieces)."""
    obs = np.zeros(layout.size, dtype=np.float32)
    hand, discard = list(state.hand), list(state.discard)
    known = state.redeals_left < redeals
    obs[layout["in_hand"].start + np.array(hand, dtype=np.int64)] = 1.0
    obs[layout["in_discard"].start + np.array(discard, dtype=np.int64)] = 1.0
    if known and hand:
        obs[layout["hand_order"].start + np.array(hand)] = np.arange(1, len(hand) + 1) / 52
    if discard:
        obs[layout["discard_order"].start + np.array(discard)] = np.arange(len(discard), 0, -1) / 52
        obs[layout["discard_top"].start + discard[-1]] = 1.0
    capacity = np.array([1] * 4 + [6] * 8, dtype=np.float32)
    for p, top in enumerate(state.piles):
        if top != EMPTY:
            obs[layout["pile_suit"].start + 4 * p + top // 13] = 1.0
            obs[layout["pile_fill"].start + p] = pile_size(p, top) / capacity[p]
    on_piles = np.ones(52, dtype=np.float32)
    on_piles[hand + discard] = 0.0
    obs[layout["on_piles"].slice] = on_piles
    obs[layout["hand_size"].start] = len(hand) / 52
    obs[layout["discard_size"].start] = len(discard) / 52
    obs[layout["redeals_left"].start] = state.redeals_left / redeals if redeals else 0.0
    obs[layout["hand_known"].start] = float(known)
    return obs
