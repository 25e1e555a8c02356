"""The verbs every game offers, so environments, agents and solvers treat all games alike.

A game object holds only its fixed variant settings; states are immutable tuples. Nothing here draws
random numbers or imports gymnasium: a game starts from a deck it is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, Protocol, TypeVar

S = TypeVar("S")


class IllegalMove(ValueError):
    """A move that the rules do not allow in the given state."""


class Game(Protocol, Generic[S]):
    """What every game offers (Quadrat, Zudecken and Quadrille each implement it)."""

    #: Short name, e.g. ``"Zudecken"``.
    name: str
    #: Cards in the pack: 32 or 52.
    pack_size: int
    #: Move numbers are ``0 .. num_moves - 1``.
    num_moves: int

    def start(self, deck: Sequence[int]) -> S:
        """The opening state for ``deck`` (card numbers, index 0 dealt first)."""
        ...

    def legal_moves(self, state: S) -> tuple[int, ...]:
        """Legal move numbers in ascending order; empty exactly when the game is over."""
        ...

    def play(self, state: S, move: int) -> S:
        """The state after ``move``; raises :class:`IllegalMove` if it is not legal."""
        ...

    def play_unchecked(self, state: S, move: int) -> S:
        """``play`` for a move already known to be legal (searches and the env skip the check)."""
        ...

    def is_over(self, state: S) -> bool: ...

    def is_won(self, state: S) -> bool: ...

    def cards_left(self, state: S) -> int:
        """Cards not yet laid off / covered / on the foundation piles."""
        ...

    def unseen(self, state: S) -> frozenset[int]:
        """Cards a player has not seen yet (their order is hidden)."""
        ...


def play_line(game: Game[S], deck: Sequence[int], moves: Sequence[int]) -> list[S]:
    """Every state of a game from ``deck`` through ``moves`` (the opening state first)."""
    states = [game.start(deck)]
    for move in moves:
        states.append(game.play(states[-1], move))
    return states
