"""Quadrille's pictures: the real layout, queens in a diamond, eight piles in a ring."""

from __future__ import annotations

import math

import numpy as np

from quadrat_env.cards import card_symbol
from quadrat_env.core.render import CARD_H, CARD_W, MARGIN, TEXT, TITLE, back, canvas, card, empty, font
from quadrat_env.games.quadrille.kernel import EMPTY
from quadrat_env.games.quadrille.rules import QuadrilleState


def quadrille_text(state: QuadrilleState) -> str:
    def pile(p: int) -> str:
        return card_symbol(state.piles[p]) if state.piles[p] != EMPTY else "··"

    top = card_symbol(state.discard[-1]) if state.discard else "··"
    queens = " ".join(pile(p) for p in range(4))
    return "\n".join(
        [
            f"Quadrille · hand {len(state.hand)} · discard {len(state.discard)} (top {top})"
            f" · redeals left {state.redeals_left}",
            f"  NW:{pile(11)}      N:{pile(4)}      NE:{pile(8)}",
            f"   W:{pile(7)}  queens:{queens}  E:{pile(5)}",
            f"  SW:{pile(10)}      S:{pile(6)}      SE:{pile(9)}",
        ]
    )


# Quadrille: pile number -> angle on the ring (degrees, 0 = east, clockwise on screen).
_RING = {4: -90, 5: 0, 6: 90, 7: 180, 8: -45, 9: 45, 10: 135, 11: -135}
_RING_R, _QUEEN_D = 150, 22
_Q_SIZE = 2 * (_RING_R + CARD_H // 2 + MARGIN) + TITLE


def quadrille_frame(state: QuadrilleState) -> np.ndarray:
    """The real layout: queens overlapped in a diamond, eight piles in a ring, hand and discard aside."""
    side = CARD_W + 2 * MARGIN
    image, draw = canvas(_Q_SIZE + side, _Q_SIZE, f"Quadrille  redeals left {state.redeals_left}")
    cx, cy = _Q_SIZE / 2, TITLE + (_Q_SIZE - TITLE) / 2
    for pile, angle in _RING.items():
        x = cx + _RING_R * math.cos(math.radians(angle)) - CARD_W / 2
        y = cy + _RING_R * math.sin(math.radians(angle)) - CARD_H / 2
        top = state.piles[pile]
        if top < 0:
            empty(draw, x, y, "5" if pile < 8 else "6")
        else:
            card(draw, x, y, top)
    # Queens N, E, S, W overlapping in a diamond; drawn W, N, E, S so the south queen lies on top.
    for pile, (dx, dy) in ((3, (-1, 0)), (0, (0, -1)), (1, (1, 0)), (2, (0, 1))):
        x, y = cx + dx * _QUEEN_D - CARD_W / 2, cy + dy * _QUEEN_D - CARD_H / 2
        if state.piles[pile] < 0:
            empty(draw, x, y, "Q")
        else:
            card(draw, x, y, state.piles[pile])
    x = _Q_SIZE
    draw.text((x, TITLE + MARGIN), "hand", fill=TEXT, font=font(13))
    hand_y = TITLE + MARGIN + 18
    if state.hand:
        back(draw, x, hand_y, len(state.hand))
    else:
        empty(draw, x, hand_y)
    disc_y = hand_y + CARD_H + 30
    draw.text((x, disc_y - 18), f"discard {len(state.discard)}", fill=TEXT, font=font(13))
    if state.discard:
        card(draw, x, disc_y, state.discard[-1])
    else:
        empty(draw, x, disc_y)
    return np.asarray(image, dtype=np.uint8)
