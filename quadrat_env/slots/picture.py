"""Quadrat's and Zudecken's pictures: the upcards in a 2x2 square or a row, the stock beside them."""

from __future__ import annotations

import numpy as np

from quadrat_env.cards import card_symbol
from quadrat_env.core.render import CARD_H, CARD_W, GAP, MARGIN, TITLE, back, canvas, card, empty
from quadrat_env.slots.kernel import EMPTY, NUM_SLOTS
from quadrat_env.slots.rules import SlotState


def slots_text(name: str, state: SlotState, rows: int) -> str:
    """The upcards in ``rows`` rows (Quadrat 2x2, Zudecken 1x4), slot numbers before each card."""
    cells = [f"{i}:{card_symbol(c) if c != EMPTY else '··'}" for i, c in enumerate(state.slots)]
    per_row = NUM_SLOTS // rows
    lines = [f"{name} · stock {state.stock_size}"]
    lines += ["  " + "  ".join(cells[r * per_row : (r + 1) * per_row]) for r in range(rows)]
    return "\n".join(lines)


def slots_frame(name: str, state: SlotState, rows: int) -> np.ndarray:
    """Quadrat (rows=2: a 2x2 square) or Zudecken (rows=1: a row of four), the stock on the left."""
    cols = NUM_SLOTS // rows
    width = 2 * MARGIN + CARD_W * (cols + 1) + GAP * (cols + 1)
    height = TITLE + 2 * MARGIN + rows * CARD_H + (rows - 1) * GAP
    image, draw = canvas(width, height, f"{name}  stock {state.stock_size}")
    top = TITLE + MARGIN
    if state.stock_size:
        back(draw, MARGIN, top, state.stock_size)
    else:
        empty(draw, MARGIN, top, "stock")
    for i, c in enumerate(state.slots):
        x = MARGIN + (CARD_W + GAP) * (1 + i % cols) + GAP
        y = top + (CARD_H + GAP) * (i // cols)
        if c < 0:
            empty(draw, x, y, str(i))
        else:
            card(draw, x, y, c)
    return np.asarray(image, dtype=np.uint8)
