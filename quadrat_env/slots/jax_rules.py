"""The four-slot games' rules in JAX (Quadrat, Quadrat52, Zudecken, Zudecken32): the twin of
``kernel.py`` beside it, for ``jit``, ``vmap`` and ``lax.scan`` on a CPU or a GPU.

The same rules over a small board of pack indices (a card's place ``k`` in its pack, the
observation's one-hot position) instead of card numbers. The tables are ``kernel.py``'s own
(``GROUPS``, ``COVER``, ``LEGAL``), and the observation's fractions are read from tables computed
as the compiled code computes them (float64, then float32), so both give the same float32 bits.
The tests play both side by side, and the readable rules (``reference.py``) stay the oracle.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from quadrat_env.slots import kernel as k
from quadrat_env.slots.kernel import NUM_SLOTS, PAIR_SLOTS
from quadrat_env.slots.rules import SlotRules


class Board(NamedTuple):
    #: int8[P]: the deal, pack indices, index 0 dealt first.
    deck: jax.Array
    #: int8[P]: each pack index's place in ``deck`` (a card is unseen while its place >= ``next``).
    place: jax.Array
    #: int32: the place in ``deck`` of the next stock card.
    next: jax.Array
    #: int8[4]: the upcards (pack indices), -1 where a slot is empty.
    slots: jax.Array


def _fractions(top: int, count: int) -> np.ndarray:
    """float32 of ``n / top`` for n = 0..count, rounded as the compiled code rounds (once)."""
    return (np.arange(count + 1) / top).astype(np.float32)


class SlotJaxRules:
    """One variant of the four-slot game in JAX, built from its compiled rules' settings."""

    def __init__(self, rules: SlotRules) -> None:
        self.name, self.pack_size, self.num_moves = rules.name, rules.pack_size, rules.num_moves
        self.obs_size, self.layout = rules.layout.size, rules.layout
        p, per_suit = rules.pack_size, rules.pack_size // 4
        self._params = params = rules.params
        self._rank_counts = bool(params[k.P_RANK_COUNTS])
        self._clear = bool(params[k.P_CLEAR])
        pack = np.array(rules.pack)
        same_suit = pack[:, None] // 13 == pack[None, :] // 13
        same_rank = pack[:, None] % 13 == pack[None, :] % 13
        match = np.zeros((p + 1, p + 1), dtype=np.int32)  # row and column p: an empty slot
        match[:p, :p] = same_suit | (bool(params[k.P_MATCH_RANK]) & same_rank)
        self._match = jnp.asarray(match)
        self._legal = jnp.asarray(k.LEGAL[params[k.P_MOVES], :, : self.num_moves].astype(bool))
        self._cover = jnp.asarray(k.COVER)
        self._stock = jnp.asarray(_fractions(p - NUM_SLOTS, p)[::-1][: p + 1].copy())  # by next
        self._suit_share = jnp.asarray(_fractions(per_suit - 1, per_suit))
        self._rank_share = jnp.asarray(_fractions(3, 4))
        self._pair_a = jnp.asarray([a for a, _ in PAIR_SLOTS])
        self._pair_b = jnp.asarray([b for _, b in PAIR_SLOTS])

    def deal(self, deck: jax.Array) -> Board:
        deck = deck.astype(jnp.int8)
        place = jnp.zeros(self.pack_size, jnp.int8).at[deck].set(jnp.arange(self.pack_size, dtype=jnp.int8))
        return Board(deck, place, jnp.int32(NUM_SLOTS), deck[:NUM_SLOTS])

    def legal(self, board: Board) -> jax.Array:
        # which of the six slot pairs match decides every group: one table row by that pattern
        rows = jnp.where(board.slots < 0, self.pack_size, board.slots).astype(jnp.int32)
        bits = self._match[rows[self._pair_a], rows[self._pair_b]]
        pattern = jnp.sum(bits << jnp.arange(len(PAIR_SLOTS)))
        return self._legal[pattern]

    def play(self, board: Board, move: jax.Array) -> Board:
        # Each slot taken away receives the next stock card, slots in ascending order; once the
        # stock is used up the slot stays empty.
        covered = self._cover[move]
        place = board.next + jnp.cumsum(covered) - 1
        arriving = jnp.where(place < self.pack_size, board.deck[jnp.clip(place, 0, self.pack_size - 1)], -1)
        slots = jnp.where(covered, arriving.astype(jnp.int8), board.slots)
        nxt = jnp.minimum(board.next + jnp.sum(covered), self.pack_size)
        return board._replace(next=nxt.astype(jnp.int32), slots=slots)

    def cards_left(self, board: Board) -> jax.Array:
        return (self.pack_size - board.next + jnp.sum(board.slots >= 0)).astype(jnp.int32)

    def won(self, board: Board) -> jax.Array:
        dealt = board.next >= self.pack_size
        return dealt & jnp.all(board.slots < 0) if self._clear else dealt

    def observe(self, board: Board) -> jax.Array:
        p, per_suit = self.pack_size, self.pack_size // 4
        slots = board.slots.astype(jnp.int32)
        up = (slots[:, None] == jnp.arange(p)[None, :]).astype(jnp.float32).reshape(-1)
        unseen = board.place.astype(jnp.int32) >= board.next
        by_suit = unseen.reshape(4, per_suit).sum(axis=1)
        safe, empty = jnp.clip(slots, 0, p - 1), slots < 0
        suit = jnp.where(empty, 0.0, self._suit_share[by_suit[safe // per_suit]])
        parts = [up, unseen.astype(jnp.float32), self._stock[board.next][None], suit]
        if self._rank_counts:
            by_rank = unseen.reshape(4, per_suit).sum(axis=0)
            parts.append(jnp.where(empty, 0.0, self._rank_share[by_rank[safe % per_suit]]))
        return jnp.concatenate(parts).astype(jnp.float32)
