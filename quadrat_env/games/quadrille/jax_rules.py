"""Quadrille's rules in JAX: the twin of ``kernel.py`` beside it, for ``jit``, ``vmap`` and
``lax.scan`` on a CPU or a GPU.

The same state as the compiled row (the hand is ``seq[pos:hlen]``, the discard pile
``stack[:dcount]``, the top card of each pile), the same pile tables (``ACCEPTS``, ``FILL``) and
the observation's fractions from tables computed as the compiled code computes them (float64,
then float32), so both give the same float32 bits. Card numbers are pack indices here (the
52-card pack is in card-number order).

One field more than the compiled row: ``at``, each card's index in the hand or the discard pile,
so the observation reads each card's place (a gather) instead of adding each place's card into
the card's cell (a scatter: under ``vmap`` on a CPU about four times slower).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from quadrat_env.games.quadrille import kernel as k
from quadrat_env.games.quadrille.kernel import NUM_PILES, PACK
from quadrat_env.games.quadrille.rules import QuadrilleRules


class Board(NamedTuple):
    seq: jax.Array  # int8[52]: the hand is seq[pos:hlen], top first
    stack: jax.Array  # int8[52]: the discard pile is stack[:dcount], the top last
    pos: jax.Array  # int32
    hlen: jax.Array  # int32
    dcount: jax.Array  # int32
    left: jax.Array  # int32: redeals left
    piles: jax.Array  # int8[12]: each pile's top card, -1 if empty
    # int8[52]: each card's index in seq or stack, where it was last placed. A card is in the hand
    # if pos <= at < hlen and seq[at] is the card, on the discard pile if at < dcount and stack[at]
    # is the card (dcount <= pos, so never both; a card on a pile or left behind fails both).
    at: jax.Array


class QuadrilleJaxRules:
    """Quadrille in JAX, with the compiled rules' settings (``redeals``)."""

    def __init__(self, rules: QuadrilleRules) -> None:
        self.name, self.pack_size, self.num_moves = rules.name, PACK, rules.num_moves
        self.obs_size, self.layout = rules.layout.size, rules.layout
        self.redeals = rules.redeals
        self._accepts = jnp.asarray(k.ACCEPTS)
        self._fill = jnp.asarray(k.FILL.astype(np.float32))
        self._order = jnp.asarray((np.arange(PACK + 1) / 52).astype(np.float32))
        share = np.arange(self.redeals + 1) / self.redeals if self.redeals > 0 else np.zeros(1)
        self._redeals_left = jnp.asarray(share.astype(np.float32))

    def deal(self, deck: jax.Array) -> Board:
        zero = jnp.int32(0)
        deck = deck.astype(jnp.int8)
        at = jnp.zeros(PACK, jnp.int8).at[deck].set(jnp.arange(PACK, dtype=jnp.int8))
        return Board(deck, jnp.zeros(PACK, jnp.int8), zero, jnp.int32(PACK), zero,
                     jnp.int32(self.redeals), jnp.full(NUM_PILES, -1, jnp.int8), at)  # fmt: skip

    def _top(self, board: Board) -> jax.Array:
        return board.stack[jnp.maximum(board.dcount - 1, 0)].astype(jnp.int32)

    def legal(self, board: Board) -> jax.Array:
        d = board.dcount
        can_deal = (board.pos < board.hlen) | ((board.left > 0) & (d > 0))
        tops = jnp.where(board.piles < 0, PACK, board.piles).astype(jnp.int32)
        fits = self._accepts[jnp.arange(NUM_PILES), tops, self._top(board)] & (d > 0)
        return jnp.concatenate([can_deal[None], fits])

    def play(self, board: Board, move: jax.Array) -> Board:
        # One-element writes are selects over the row (``where(cells == i, new, old)``), not
        # scatters: under ``vmap`` on a CPU a scatter costs several times a select of the row.
        pos, d, cells = board.pos, board.dcount, jnp.arange(PACK)
        card, index = board.seq[jnp.minimum(pos, PACK - 1)], jnp.minimum(d, PACK - 1).astype(jnp.int8)
        turn = board._replace(stack=jnp.where(cells == d, card, board.stack), pos=pos + 1, dcount=d + 1,
                              at=jnp.where(cells == card, index, board.at))  # fmt: skip
        # a redeal: the discard pile, first dealt on top, is the new hand (each card keeps its index)
        redeal = board._replace(seq=jnp.where(cells < d, board.stack, board.seq), hlen=d,
                                pos=jnp.int32(0), dcount=jnp.int32(0), left=board.left - 1)  # fmt: skip
        pile = jnp.arange(NUM_PILES) == jnp.maximum(move - 1, 0)
        to_pile = board._replace(piles=jnp.where(pile, board.stack[d - 1], board.piles), dcount=d - 1)
        dealing = move == k.DEAL
        out = jax.tree_util.tree_map(lambda a, b: jnp.where(pos < board.hlen, a, b), turn, redeal)
        return jax.tree_util.tree_map(lambda a, b: jnp.where(dealing, a, b), out, to_pile)

    def cards_left(self, board: Board) -> jax.Array:
        return (board.hlen - board.pos + board.dcount).astype(jnp.int32)

    def won(self, board: Board) -> jax.Array:
        return self.cards_left(board) == 0

    def observe(self, board: Board) -> jax.Array:
        card, at = jnp.arange(PACK, dtype=jnp.int8), board.at.astype(jnp.int32)
        in_hand = (at >= board.pos) & (at < board.hlen) & (board.seq[at] == card)
        in_discard = (at < board.dcount) & (board.stack[at] == card)
        known = board.left < self.redeals
        zeros = jnp.zeros(PACK, jnp.float32)
        hand, discard = in_hand.astype(jnp.float32), in_discard.astype(jnp.float32)
        hand_order = jnp.where(in_hand & known, self._order[jnp.clip(at - board.pos + 1, 0, PACK)], 0.0)
        discard_order = jnp.where(in_discard, self._order[jnp.clip(board.dcount - at, 0, PACK)], 0.0)
        top = jnp.where(board.dcount > 0, jax.nn.one_hot(self._top(board), PACK, dtype=jnp.float32), zeros)
        tops = board.piles.astype(jnp.int32)
        suits = jax.nn.one_hot(jnp.where(tops >= 0, tops // 13, -1), 4, dtype=jnp.float32).reshape(-1)
        fill = jnp.where(tops >= 0, self._fill[jnp.arange(NUM_PILES), jnp.clip(tops, 0, PACK)], 0.0)
        sizes = jnp.stack([self._order[board.hlen - board.pos], self._order[board.dcount],
                           self._redeals_left[jnp.clip(board.left, 0, self._redeals_left.shape[0] - 1)],
                           known.astype(jnp.float32)])  # fmt: skip
        return jnp.concatenate([hand, discard, 1.0 - hand - discard, hand_order, discard_order, top,
                                suits, fill, sizes])  # fmt: skip
