"""Drawing pieces for the games' pictures (RGB arrays drawn with Pillow, the ``render`` extra).

Suit symbols are drawn as shapes, not glyphs, so the picture does not depend on a font having them.
Frame sizes are fixed per game, so videos of an episode have one shape throughout.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from quadrat_env.cards import RANKS, RED_SUITS

if TYPE_CHECKING:
    from PIL import ImageDraw, ImageFont

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
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return _pil()[2].load_default(size=size)


def _suit(draw: ImageDraw.ImageDraw, cx: float, cy: float, r: float, suit: int) -> None:
    """A suit symbol of radius ``r`` centred on (cx, cy): 0 clubs, 1 diamonds, 2 hearts, 3 spades."""
    fill = RED if suit in RED_SUITS else BLACK
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
    colour = RED if c // 13 in RED_SUITS else BLACK
    draw.text((x + 5, y + 3), rank, fill=colour, font=font(16))
    _suit(draw, x + 11, y + 28, 6, c // 13)
    _suit(draw, x + CARD_W / 2 + 4, y + CARD_H / 2 + 10, 14, c // 13)


def back(draw: ImageDraw.ImageDraw, x: float, y: float, count: int) -> None:
    """A face-down pile showing how many cards it holds."""
    draw.rounded_rectangle([x, y, x + CARD_W, y + CARD_H], radius=6, fill=BACK, outline=EDGE, width=2)
    draw.rounded_rectangle([x + 5, y + 5, x + CARD_W - 5, y + CARD_H - 5], radius=4, outline=TEXT)
    draw.text((x + CARD_W / 2, y + CARD_H / 2), str(count), fill=TEXT, font=font(20), anchor="mm")


def empty(draw: ImageDraw.ImageDraw, x: float, y: float, label: str = "") -> None:
    """An empty slot or pile: an outline only."""
    draw.rounded_rectangle([x, y, x + CARD_W, y + CARD_H], radius=6, outline=EMPTY_EDGE, width=2)
    if label:
        draw.text((x + CARD_W / 2, y + CARD_H / 2), label, fill=EMPTY_EDGE, font=font(13), anchor="mm")


def canvas(width: int, height: int, title: str):  # noqa: ANN201 - a Pillow image and its drawer
    image_cls, draw_mod, _ = _pil()
    image = image_cls.new("RGB", (width, height), TABLE)
    draw = draw_mod.Draw(image)
    draw.text((MARGIN, 6), title, fill=TEXT, font=font(15))
    return image, draw


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
            pg.display.init()  # only the display: pg.init() would also open the sound device
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
