"""Pure rules of every game: no gymnasium, no random numbers. Each game starts from a given deck.

Every game offers the same verbs (:class:`~quadrat_env.rules.base.Game`): ``start(deck)``,
``legal_moves(state)``, ``play(state, move)``, ``is_over(state)``, ``is_won(state)``,
``cards_left(state)`` and ``unseen(state)``.
"""

from __future__ import annotations

from quadrat_env.rules.base import Game, IllegalMove, play_line
from quadrat_env.rules.quadrille import QuadrilleGame, QuadrilleState
from quadrat_env.rules.slots import GROUPS, SlotGame, SlotState, quadrat, zudecken

__all__ = [
    "GROUPS",
    "Game",
    "IllegalMove",
    "QuadrilleGame",
    "QuadrilleState",
    "SlotGame",
    "SlotState",
    "play_line",
    "quadrat",
    "zudecken",
]
