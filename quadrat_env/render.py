"""Pictures of the table as RGB arrays, drawn with Pillow (the ``render`` extra).

Suit symbols are drawn as shapes, not glyphs, so the picture does not depend on a font having them.
Frame sizes are fixed per game, so videos of an episode have one shape throughout.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from quadrat_env.cards import RANKS

if TYPE_CHECKING:
    from PIL import ImageDraw, ImageFont

    from quadrat_env.rules.quadrille import QuadrilleState
    from quadrat_env.rules.slots import SlotState

CARD_W, CARD_H, GAP, MARGIN, TITLE = 56, 80, 14, 16, 26
TABLE = (28, 102, 58)
FACE, EDGE, EMPTY_EDGE = (250, 250, 246), (40, 40, 40), (170, 210, 180)
RED, BLACK, BACK, TEXT = (200, 30, 35), (25, 25, 25), (40, 64, 150), (245, 245, 235)


def _pil():
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:  # pragma: no cover - depends on the installation
        raise ImportError(
            "render_mode='rgb_array' draws with Pillow: pip install 'quadrat-env[render]'"
        ) from None
    return Image, ImageDraw, ImageFont


@lru_cache(maxsize=8)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return _pil()[2].load_default(size=size)


def _suit(draw: ImageDraw.ImageDraw, cx: float, cy: float, r: float, suit: int) -> None:
    """A suit symbol of radius ``r`` centred on (cx, cy): 0 clubs, 1 diamonds, 2 hearts, 3 spades."""
    fill = RED if suit in (1, 2) else BLACK
    if suit == 1:
        draw.polygon([(cx, cy - r), (cx + 0.75 * r, cy), (cx, cy + r), (cx - 0.75 * r, cy)], fill=fill)
        return
    if suit == 0:
        b = 0.42 * r
        for dx, dy in ((0, -0.45 * r), (-0.48 * r, 0.12 * r), (0.48 * r, 0.12 * r)):
            draw.ellipse([cx + dx - b, cy + dy - b, cx + dx + b, cy + dy + b], fill=fill)
        draw.polygon([(cx, cy), (cx - 0.35 * r, cy + r), (cx + 0.35 * r, cy + r)], fill=fill)
        return
    # hearts and spades: two lobes and a point; a spade is a heart upside down with a stem
    up = 1 if suit == 2 else -1
    b = 0.5 * r
    for dx in (-0.48 * r, 0.48 * r):
        draw.ellipse([cx + dx - b, cy - up * 0.3 * r - b, cx + dx + b, cy - up * 0.3 * r + b], fill=fill)
    draw.polygon([(cx - 0.97 * r, cy - up * 0.15 * r), (cx + 0.97 * r, cy - up * 0.15 * r),
                  (cx, cy + up * 0.95 * r)], fill=fill)  # fmt: skip
    if suit == 3:
        draw.polygon([(cx, cy), (cx - 0.3 * r, cy + r), (cx + 0.3 * r, cy + r)], fill=fill)


def card(draw: ImageDraw.ImageDraw, x: float, y: float, c: int) -> None:
    """A face-up card with its top-left corner at (x, y)."""
    draw.rounded_rectangle([x, y, x + CARD_W, y + CARD_H], radius=6, fill=FACE, outline=EDGE, width=2)
    rank = "10" if RANKS[c % 13] == "T" else RANKS[c % 13]
    colour = RED if c // 13 in (1, 2) else BLACK
    draw.text((x + 5, y + 3), rank, fill=colour, font=_font(16))
    _suit(draw, x + 11, y + 28, 6, c // 13)
    _suit(draw, x + CARD_W / 2 + 4, y + CARD_H / 2 + 10, 14, c // 13)


def back(draw: ImageDraw.ImageDraw, x: float, y: float, count: int) -> None:
    """A face-down pile showing how many cards it holds."""
    draw.rounded_rectangle([x, y, x + CARD_W, y + CARD_H], radius=6, fill=BACK, outline=EDGE, width=2)
    draw.rounded_rectangle([x + 5, y + 5, x + CARD_W - 5, y + CARD_H - 5], radius=4, outline=TEXT)
    draw.text((x + CARD_W / 2, y + CARD_H / 2), str(count), fill=TEXT, font=_font(20), anchor="mm")


def empty(draw: ImageDraw.ImageDraw, x: float, y: float, label: str = "") -> None:
    """An empty slot or pile: an outline only."""
    draw.rounded_rectangle([x, y, x + CARD_W, y + CARD_H], radius=6, outline=EMPTY_EDGE, width=2)
    if label:
        draw.text((x + CARD_W / 2, y + CARD_H / 2), label, fill=EMPTY_EDGE, font=_font(13), anchor="mm")


def _canvas(width: int, height: int, title: str):
    image_cls, draw_mod, _ = _pil()
    image = image_cls.new("RGB", (width, height), TABLE)
    draw = draw_mod.Draw(image)
    draw.text((MARGIN, 6), title, fill=TEXT, font=_font(15))
    return image, draw


def slots_frame(name: str, state: SlotState, rows: int) -> np.ndarray:
    """Quadrat (rows=2: a 2x2 square) or Zudecken (rows=1: a row of four), the stock on the left."""
    cols = 4 // rows
    width = 2 * MARGIN + CARD_W * (cols + 1) + GAP * (cols + 1)
    height = TITLE + 2 * MARGIN + rows * CARD_H + (rows - 1) * GAP
    image, draw = _canvas(width, height, f"{name}  stock {state.stock_size}")
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


# Quadrille: pile number -> angle on the ring (degrees, 0 = east, clockwise on screen).
_RING = {4: -90, 5: 0, 6: 90, 7: 180, 8: -45, 9: 45, 10: 135, 11: -135}
_RING_R, _QUEEN_D = 150, 22
_Q_SIZE = 2 * (_RING_R + CARD_H // 2 + MARGIN) + TITLE


def quadrille_frame(state: QuadrilleState) -> np.ndarray:
    """The real layout: queens overlapped in a diamond, eight piles in a ring, hand and discard aside."""
    side = CARD_W + 2 * MARGIN
    image, draw = _canvas(_Q_SIZE + side, _Q_SIZE, f"Quadrille  redeals left {state.redeals_left}")
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
    draw.text((x, TITLE + MARGIN), "hand", fill=TEXT, font=_font(13))
    hand_y = TITLE + MARGIN + 18
    if state.hand:
        back(draw, x, hand_y, len(state.hand))
    else:
        empty(draw, x, hand_y)
    disc_y = hand_y + CARD_H + 30
    draw.text((x, disc_y - 18), f"discard {len(state.discard)}", fill=TEXT, font=_font(13))
    if state.discard:
        card(draw, x, disc_y, state.discard[-1])
    else:
        empty(draw, x, disc_y)
    return np.asarray(image, dtype=np.uint8)


class Window:
    """render_mode="human": the rgb_array frame shown in a pygame window (the ``human`` extra)."""

    def __init__(self, title: str, fps: float) -> None:
        try:
            import pygame
        except ImportError:
            raise ImportError("render_mode='human' needs pygame: pip install 'quadrat-env[human]'") from None
        self.pygame, self.title, self.fps = pygame, title, fps
        self.screen = None
        self.clock = pygame.time.Clock()

    def show(self, frame: np.ndarray) -> None:
        pg = self.pygame
        if self.screen is None:
            pg.init()
            pg.display.set_caption(self.title)
            self.screen = pg.display.set_mode((frame.shape[1], frame.shape[0]))
        pg.event.pump()
        self.screen.blit(pg.surfarray.make_surface(frame.swapaxes(0, 1)), (0, 0))
        pg.display.flip()
        self.clock.tick(self.fps)

    def close(self) -> None:
        if self.screen is not None:
            self.pygame.display.quit()
            self.screen = None
