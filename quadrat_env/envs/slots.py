"""Observation encoding and text picture shared by Quadrat and Zudecken (four upcards + a stock)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from quadrat_env.cards import PACKS, card_symbol
from quadrat_env.envs.base import PatienceEnv
from quadrat_env.rules.slots import EMPTY, SlotState


@dataclass(frozen=True)
class SlotLayout:
    """Index ranges of the flat observation. ``P`` is the pack size (32 or 52).

    ==============  ==================  ====================================================
    name            indices             meaning
    ==============  ==================  ====================================================
    ``upcards``     ``[0, 4P)``         slot ``i`` one-hot over the pack at ``i*P + k``
                                        (``k`` = :attr:`index` of the card; all 0 if empty)
    ``unseen``      ``[4P, 5P)``        1 for each card still in the stock (order hidden)
    ``stock``       ``5P``              stock size / ``(P - 4)``
    ``suit_match``  ``[5P+1, 5P+5)``    per slot: unseen cards of its suit / ``(P/4 - 1)``
    ``rank_match``  ``[5P+5, 5P+9)``    per slot: unseen cards of its rank / 3 (Zudecken only)
    ==============  ==================  ====================================================
    """

    pack_size: int
    rank_features: bool
    #: Card number (0..51) -> position in the pack (0..P-1), -1 for cards not in the pack.
    index: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        index = np.full(52, -1, dtype=np.int64)
        index[list(PACKS[self.pack_size])] = np.arange(self.pack_size)
        object.__setattr__(self, "index", index)

    @property
    def upcards(self) -> slice:
        return slice(0, 4 * self.pack_size)

    @property
    def unseen(self) -> slice:
        return slice(4 * self.pack_size, 5 * self.pack_size)

    @property
    def stock(self) -> int:
        return 5 * self.pack_size

    @property
    def suit_match(self) -> slice:
        return slice(self.stock + 1, self.stock + 5)

    @property
    def rank_match(self) -> slice | None:
        return slice(self.stock + 5, self.stock + 9) if self.rank_features else None

    @property
    def size(self) -> int:
        return self.stock + (9 if self.rank_features else 5)

    def encode(self, state: SlotState) -> np.ndarray:
        p = self.pack_size
        obs = np.zeros(self.size, dtype=np.float32)
        unseen = state.deck[state.next :]
        if unseen:
            obs[self.unseen.start + self.index[list(unseen)]] = 1.0
        obs[self.stock] = len(unseen) / (p - 4)
        suits = np.bincount([c // 13 for c in unseen], minlength=4)
        ranks = np.bincount([c % 13 for c in unseen], minlength=13)
        for i, c in enumerate(state.slots):
            if c == EMPTY:
                continue
            obs[i * p + self.index[c]] = 1.0
            obs[self.suit_match.start + i] = suits[c // 13] / (p // 4 - 1)
            if self.rank_features:
                obs[self.stock + 5 + i] = ranks[c % 13] / 3
        return obs


class SlotEncoder:
    """One env's observation, kept up to date move by move: the numbers of :meth:`SlotLayout.encode`
    without re-encoding the whole table each step (a move changes at most four slots)."""

    def __init__(self, layout: SlotLayout) -> None:
        self.layout = layout
        self.index: list[int] = layout.index.tolist()
        self.obs = np.zeros(layout.size, dtype=np.float32)
        self.suits = [0] * 4  # unseen cards per suit
        self.ranks = [0] * 13  # unseen cards per rank

    def reset(self, state: SlotState) -> np.ndarray:
        self.obs = self.layout.encode(state)
        self.suits, self.ranks = [0] * 4, [0] * 13
        for c in state.deck[state.next :]:
            self.suits[c // 13] += 1
            self.ranks[c % 13] += 1
        return self.obs

    def advance(self, before: SlotState, after: SlotState) -> np.ndarray:
        obs, index, suits, ranks = self.obs, self.index, self.suits, self.ranks
        p = self.layout.pack_size
        unseen = p * 4
        for i in range(4):
            old, new = before.slots[i], after.slots[i]
            if old == new:
                continue
            if old != EMPTY:
                obs[i * p + index[old]] = 0.0
            if new != EMPTY:
                obs[i * p + index[new]] = 1.0
                obs[unseen + index[new]] = 0.0
                suits[new // 13] -= 1
                ranks[new % 13] -= 1
        # The stock size and the per-slot match counts in one write.
        values = [(len(after.deck) - after.next) / (p - 4)]
        per_suit = p // 4 - 1
        values += [0.0 if c == EMPTY else suits[c // 13] / per_suit for c in after.slots]
        if self.layout.rank_features:
            values += [0.0 if c == EMPTY else ranks[c % 13] / 3 for c in after.slots]
        obs[self.layout.stock : self.layout.size] = values
        return obs


def render_slots(name: str, state: SlotState, rows: int) -> str:
    """The upcards in ``rows`` rows (Quadrat 2x2, Zudecken 1x4), slot numbers before each card."""
    cells = [f"{i}:{card_symbol(c) if c != EMPTY else '··'}" for i, c in enumerate(state.slots)]
    per_row = 4 // rows
    lines = [f"{name} · stock {state.stock_size}"]
    lines += ["  " + "  ".join(cells[r * per_row : (r + 1) * per_row]) for r in range(rows)]
    return "\n".join(lines)


class SlotEnv(PatienceEnv):
    """What the Quadrat and Zudecken envs share: the observation kept up to date by a
    :class:`SlotEncoder`, and pictures with the upcards in ``rows`` rows."""

    rows: ClassVar[int] = 1
    layout: SlotLayout
    _encoder: SlotEncoder

    def _observe(self, state: SlotState) -> np.ndarray:
        return self._encoder.reset(state)

    def _observe_move(self, before: SlotState, after: SlotState) -> np.ndarray:
        return self._encoder.advance(before, after)

    def _render_text(self, state: SlotState) -> str:
        return render_slots(self.game.name, state, rows=self.rows)

    def _render_rgb(self, state: SlotState) -> np.ndarray:
        from quadrat_env.render import slots_frame  # Pillow is only needed for pictures

        return slots_frame(self.game.name, state, rows=self.rows)
