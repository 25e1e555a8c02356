"""The verbs every game offers, over readable states, computed by the game's compiled rules.

A game's rules class subclasses ``Rules``: it names its compiled ``Kernel``, its variant settings
(``params``) and its observation ``Layout``, and converts between a readable state (an immutable
named tuple, what people, tests and pictures use) and the int64 state row the compiled code works
on. The verbs are then the same for every game, with no gymnasium and no random numbers: a game
starts from a deck it is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

from quadrat_env.cards import PACKS, check_pack
from quadrat_env.core.kernel import Kernel
from quadrat_env.core.layout import Layout

S = TypeVar("S")


class IllegalMove(ValueError):
    """A move that the rules do not allow in the given state."""


class Rules(Generic[S]):
    """One variant of a game: settings, compiled rules, observation layout and the shared verbs."""

    #: The compiled rules (shared by every variant of the game).
    kernel: ClassVar[Kernel]
    #: Ints in a state row.
    state_size: ClassVar[int]
    name: str
    pack_size: int
    #: Moves are numbered ``0 .. num_moves - 1``.
    num_moves: int
    #: Variant settings as the compiled rules read them.
    params: np.ndarray
    layout: Layout
    #: For the solver: the order in which moves are tried, and an upper bound on a game's moves.
    search_order: tuple[int, ...] = ()
    max_moves: int = 0
    #: The greedy rule is optimal: the solver and the planner play it instead of searching (and
    #: the game needs no position ``key`` or ``determinize``).
    greedy_is_optimal: ClassVar[bool] = False

    # -- what a game supplies ------------------------------------------------------------------
    def to_row(self, state: S) -> np.ndarray:
        """The int64 state row of a readable state."""
        raise NotImplementedError

    def view(self, row: np.ndarray) -> S:
        """The readable state of a state row."""
        raise NotImplementedError

    def unseen(self, state: S) -> frozenset[int]:
        """Cards a player has not seen yet (their order is hidden)."""
        raise NotImplementedError

    def describe(self, state: S, move: int) -> str:
        """A move in words, e.g. ``cover slots 0, 2 (7♣ 7♦)``."""
        raise NotImplementedError

    def greedy(self, mask: np.ndarray) -> int:
        """The game's greedy rule: an action read off a legal-action mask."""
        raise NotImplementedError

    def greedy_batch(self, masks: np.ndarray) -> np.ndarray:
        """``greedy`` for a batch of masks (a game may do it faster as one array operation)."""
        return np.array([self.greedy(m) for m in np.asarray(masks)], dtype=np.int64)

    def determinize(self, observation: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """For the planner: a state row that agrees with ``observation`` in everything a player
        sees, with the hidden cards in an order drawn from ``rng``."""
        raise NotImplementedError(f"{self.name} offers no determinization for the planner")

    def determinize_many(self, observation: np.ndarray, rng: np.random.Generator, count: int) -> np.ndarray:
        """``count`` rows of ``determinize`` (drawn in turn from ``rng``), shape (count, state_size)."""
        return np.stack([self.determinize(observation, rng) for _ in range(count)])

    # -- the verbs -----------------------------------------------------------------------------
    def start(self, deck: Sequence[int]) -> S:
        """The opening state for ``deck`` (card numbers, index 0 dealt first)."""
        return self.view(self.start_row(deck))

    def start_row(self, deck: Sequence[int], checked: bool = False) -> np.ndarray:
        """The opening state row for ``deck`` (``checked``: already a permutation of the pack)."""
        cards = tuple(deck)
        if not checked:
            check_pack(cards, self.pack)
        row = np.zeros(self.state_size, dtype=np.int64)
        self.kernel.reset_one(row, np.array(cards, dtype=np.int64), self._scratch(), self._mask(),
                              self.params)  # fmt: skip
        return row

    def legal_moves(self, state: S) -> tuple[int, ...]:
        """Legal move numbers in ascending order; empty exactly when the game is over."""
        mask = self._mask()
        self.kernel.legal(self.to_row(state), mask, self.params)
        return tuple(np.flatnonzero(mask).tolist())

    def play(self, state: S, move: int) -> S:
        """The state after ``move``; raises ``IllegalMove`` if it is not legal."""
        legal = self.legal_moves(state)
        if move not in legal:
            raise IllegalMove(f"{self.name}: move {move!r} is not legal now; legal moves: {list(legal)}")
        return self.play_unchecked(state, move)

    def play_unchecked(self, state: S, move: int) -> S:
        """``play`` for a move already known to be legal."""
        row = self.to_row(state)
        self.kernel.play(row, int(move), self._scratch(), self.params)
        return self.view(row)

    def is_over(self, state: S) -> bool:
        return not self.legal_moves(state)

    def is_won(self, state: S) -> bool:
        return self.is_over(state) and bool(self.kernel.won(self.to_row(state), self.params))

    def cards_left(self, state: S) -> int:
        """Cards not yet laid off / covered / on the piles."""
        return int(self.kernel.cards_left(self.to_row(state), self.params))

    def _scratch(self) -> np.ndarray:
        return np.zeros(self.layout.size, dtype=np.float32)

    def _mask(self) -> np.ndarray:
        return np.zeros(self.num_moves + 1, dtype=np.int8)

    @property
    def pack(self) -> tuple[int, ...]:
        """The game's cards in pack order (what a shuffle permutes); 32 or 52 cards unless a game
        names its own."""
        return PACKS[self.pack_size]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and np.array_equal(other.params, self.params)

    def __hash__(self) -> int:
        return hash((type(self), tuple(self.params.tolist())))
