"""Batched Quadrille: the rules of :mod:`quadrat_env.rules.quadrille` as array operations.

State per env: ``seq``, the current pass in dealing order, with ``pos`` cards of it dealt and
``hlen`` cards in it (the hand is ``seq[pos:hlen]``); the discard pile ``stack[:dcount]`` (top
last); the top card of each of the twelve piles; redeals left. A redeal makes the discard pile
the new pass, in the order it was dealt. Which card fits which pile is one lookup table built
from the single rules' ``accepts``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from quadrat_env.envs import quadrille as q
from quadrat_env.envs.quadrille import QuadrilleEnv
from quadrat_env.rules.quadrille import EMPTY, NUM_PILES, QuadrilleState, accepts, pile_size
from quadrat_env.vector import kernels
from quadrat_env.vector.base import PatienceVectorEnv, Rows

#: ACCEPTS[pile, top, card]: ``card`` may go on ``pile`` whose top is ``top`` (index 52 = empty).
ACCEPTS = np.array([[[accepts(p, t if t < 52 else EMPTY, c) for c in range(52)] for t in range(53)]
                    for p in range(NUM_PILES)], dtype=bool)  # fmt: skip


def _fill(pile: int, top: int) -> float:
    """The observation's fill value of a pile, computed exactly as the single env does (0 when the
    top card cannot lie on that pile, or for index 52, the empty pile)."""
    try:
        return 0.0 if top == 52 else float(pile_size(pile, top) / q._CAPACITY[pile])
    except KeyError:
        return 0.0


FILL = np.array([[_fill(p, t) for t in range(53)] for p in range(NUM_PILES)])
_POS = np.arange(52)


class QuadrilleVectorEnv(PatienceVectorEnv):
    """``gym.make_vec("quadrat_env/Quadrille-v0", num_envs=N)``: N Quadrille deals as arrays.

    ``backend="numba"`` runs :mod:`quadrat_env.vector.kernels`' compiled loops for dealing and
    playing; ``"numpy"`` the array code below. ``"auto"`` (default) takes numba when installed.
    """

    single_env_class = QuadrilleEnv

    def __init__(self, num_envs: int = 1, **kwargs: Any) -> None:
        super().__init__(num_envs, **kwargs)

    def _alloc(self, n: int) -> None:
        self.seq = np.zeros((n, 52), dtype=np.int64)
        self.pos = np.zeros(n, dtype=np.int64)
        self.hlen = np.zeros(n, dtype=np.int64)
        self.stack = np.zeros((n, 52), dtype=np.int64)
        self.dcount = np.zeros(n, dtype=np.int64)
        self.piles = np.full((n, NUM_PILES), EMPTY, dtype=np.int64)
        self.redeals_left = np.zeros(n, dtype=np.int64)

    def _state_arrays(self) -> tuple[np.ndarray, ...]:
        return self.seq, self.pos, self.hlen, self.stack, self.dcount, self.piles, self.redeals_left

    def _kernel_deal(self, rows: np.ndarray) -> None:
        kernels.quadrille_deal(rows, self.decks, *self._state_arrays(), self.obs, FILL, self.game.redeals)

    def _deal(self, rows: np.ndarray) -> None:
        self.seq[rows] = self.decks[rows]
        self.pos[rows] = 0
        self.hlen[rows] = 52
        self.dcount[rows] = 0
        self.piles[rows] = EMPTY
        self.redeals_left[rows] = self.game.redeals
        self._encode(rows)

    def _legal(self, rows: Rows) -> np.ndarray:
        pos, hlen, dcount = self.pos[rows], self.hlen[rows], self.dcount[rows]
        masks = np.zeros((len(pos), self.n_actions), dtype=np.int8)
        masks[:, 0] = (pos < hlen) | ((self.redeals_left[rows] > 0) & (dcount > 0))
        top = np.take_along_axis(self.stack[rows], np.maximum(dcount - 1, 0)[:, None], axis=1)
        fits = ACCEPTS[np.arange(NUM_PILES), self.piles[rows], top]  # (k, 12)
        masks[:, 1:] = fits & (dcount > 0)[:, None]
        return masks

    def _kernel_advance(self, active: np.ndarray, actions: np.ndarray) -> np.ndarray:
        return kernels.quadrille_play(active, actions, *self._state_arrays(), self.obs, self.masks, ACCEPTS,
                                      FILL, self.game.redeals)  # fmt: skip

    def _play(self, active: np.ndarray, actions: np.ndarray) -> None:
        rows = np.flatnonzero(active)
        moves = actions[rows]
        deal = moves == 0
        has_hand = self.pos[rows] < self.hlen[rows]
        fresh, redeal = rows[deal & has_hand], rows[deal & ~has_hand]
        self.stack[fresh, self.dcount[fresh]] = self.seq[fresh, self.pos[fresh]]  # turn a card
        self.pos[fresh] += 1
        self.dcount[fresh] += 1
        self.seq[redeal] = self.stack[redeal]  # the discard pile, first dealt on top, is the hand
        self.hlen[redeal] = self.dcount[redeal]
        self.pos[redeal] = 0
        self.dcount[redeal] = 0
        self.redeals_left[redeal] -= 1
        plays, piles = rows[~deal], moves[~deal] - 1
        self.piles[plays, piles] = self.stack[plays, self.dcount[plays] - 1]
        self.dcount[plays] -= 1
        self._encode(rows)

    def _encode(self, rows: np.ndarray) -> None:
        k = len(rows)
        pos, hlen, dcount = self.pos[rows, None], self.hlen[rows, None], self.dcount[rows, None]
        seq, stack, piles = self.seq[rows], self.stack[rows], self.piles[rows]
        known = (self.redeals_left[rows] < self.game.redeals)[:, None]
        obs = np.zeros((k, q.OBS_SIZE), dtype=np.float32)
        r = np.arange(k)[:, None]
        in_hand = (pos <= _POS) & (hlen > _POS)
        in_discard = dcount > _POS
        # Cards outside the hand or discard are sent to a spare column 52 and dropped.
        block = np.zeros((k, 53))
        block[r, np.where(in_hand, seq, 52)] = 1.0
        obs[:, q.IN_HAND] = block[:, :52]
        block[:] = 0.0
        block[r, np.where(in_discard, stack, 52)] = 1.0
        obs[:, q.IN_DISCARD] = block[:, :52]
        obs[:, q.ON_PILES] = 1.0 - obs[:, q.IN_HAND] - obs[:, q.IN_DISCARD]
        block[:] = 0.0
        block[r, np.where(in_hand & known, seq, 52)] = (_POS - pos + 1) / 52
        obs[:, q.HAND_ORDER] = block[:, :52]
        block[:] = 0.0
        block[r, np.where(in_discard, stack, 52)] = (dcount - _POS) / 52
        obs[:, q.DISCARD_ORDER] = block[:, :52]
        has_top = dcount[:, 0] > 0
        top = stack[r[:, 0], np.maximum(dcount[:, 0] - 1, 0)]
        obs[r[has_top, 0], q.DISCARD_TOP.start + top[has_top]] = 1.0
        pr, pp = np.nonzero(piles != EMPTY)
        obs[pr, q.PILE_SUIT.start + 4 * pp + piles[pr, pp] // 13] = 1.0
        obs[:, q.PILE_FILL] = FILL[np.arange(NUM_PILES), piles]
        obs[:, q.HAND_SIZE] = (hlen - pos)[:, 0] / 52
        obs[:, q.DISCARD_SIZE] = dcount[:, 0] / 52
        redeals = self.game.redeals
        obs[:, q.REDEALS_LEFT] = self.redeals_left[rows] / redeals if redeals else 0.0
        obs[:, q.HAND_KNOWN] = known[:, 0]
        self.obs[rows] = obs

    def _cards_left(self, rows: Rows) -> np.ndarray:
        return self.hlen[rows] - self.pos[rows] + self.dcount[rows]

    def _won(self, rows: np.ndarray) -> np.ndarray:
        return self._cards_left(rows) == 0

    def state(self, i: int) -> QuadrilleState:
        return QuadrilleState(
            tuple(self.seq[i, self.pos[i] : self.hlen[i]].tolist()),
            tuple(self.stack[i, : self.dcount[i]].tolist()),
            tuple(self.piles[i].tolist()),
            int(self.redeals_left[i]),
        )
