"""Batched Quadrat and Zudecken: the rules of :mod:`quadrat_env.rules.slots` as array operations.

State per env: the deck, ``next`` (index of the next stock card) and four slots (``EMPTY`` = -1).
Legality is the single rules' table lookup, done for every env at once: the six slot pairs give a
6-bit pattern, and ``_legal_by_pattern`` maps it to the legal moves. A move's observation changes
only where a slot was covered or a card was dealt, so it is updated in place, not re-encoded.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from quadrat_env.envs.quadrat import QuadratEnv
from quadrat_env.envs.zudecken import ZudeckenEnv
from quadrat_env.rules.slots import _MATCH, EMPTY, GROUPS, NUM_PAIRS, SlotState, _legal_by_pattern
from quadrat_env.vector import kernels
from quadrat_env.vector.base import ALL, PatienceVectorEnv, Rows

_PAIR_I = np.array([i for i, _ in GROUPS[:NUM_PAIRS]])
_PAIR_J = np.array([j for _, j in GROUPS[:NUM_PAIRS]])
_BITS = np.arange(NUM_PAIRS)  # pair k is bit k of the pattern, as in the single rules
#: COVER[move, slot]: the move covers the slot; OFFSET[move, slot]: which new card it receives
#: (0 = the next stock card; slots are refilled in ascending order).
#: Row NO_MOVE covers nothing: what envs that do not move this step "play".
NO_MOVE = len(GROUPS)
COVER = np.array([[s in g for s in range(4)] for g in (*GROUPS, ())], dtype=bool)
OFFSET = np.cumsum(COVER, axis=1) - 1
SIZE = COVER.sum(axis=1)
#: What the suit and rank match counts are divided by, per pack size (per slot: suit, then rank).
_DIVISORS = {p: np.array([p // 4 - 1] * 4 + [3] * 4) for p in (32, 52)}
#: Where each slot's one-hot block starts, per pack size.
_SLOT_BASE = {p: np.arange(4) * p for p in (32, 52)}


def _count(row: np.ndarray, cards: np.ndarray, k: int, weights: np.ndarray | None = None) -> np.ndarray:
    """Per row of ``cards`` (k rows): how many (weighted) cards of each suit and each rank."""
    idx = np.concatenate([row * 17 + cards // 13, row * 17 + 4 + cards % 13], axis=1).ravel()
    w = None if weights is None else np.concatenate([weights, weights], axis=1).ravel()
    return np.bincount(idx, w, 17 * k).reshape(k, 17)


class SlotVectorEnv(PatienceVectorEnv):
    """N deals of a four-slot game at once (see the single env's docstring for the spec).

    ``backend="numba"`` runs :mod:`quadrat_env.vector.kernels`' compiled loops for dealing and
    playing; ``"numpy"`` the array code below. ``"auto"`` (default) takes numba when installed.
    """

    def _alloc(self, n: int) -> None:
        game = self.game
        self.next = np.zeros(n, dtype=np.int64)
        self.slots = np.full((n, 4), EMPTY, dtype=np.int64)
        # Unseen cards per suit (columns 0-3) and per rank (4-16); float64, as the single env's
        # divisions see them (small whole numbers are exact).
        self.unseen_counts = np.zeros((n, 17))
        # Index 52 stands for EMPTY (reached as -1) in both tables.
        self._match = np.array(_MATCH[game.match_rank], dtype=np.int64)
        legal = _legal_by_pattern(game._group_limit)
        self._mask_table = np.zeros((64, self.n_actions), dtype=np.int8)
        for pattern, moves in enumerate(legal):
            self._mask_table[pattern, list(moves)] = 1
        self.layout = self.single.layout
        self._ranks = self.layout.rank_match is not None  # Zudecken also counts unseen ranks
        self._index = np.append(self.layout.index, -1)  # card -> position in the pack (-1: EMPTY)
        self._row_base = np.arange(n)[:, None] * self.layout.size  # flat index of each row's start
        self._row_ids = np.repeat(np.arange(n)[:, None], 4, axis=1)

    def _kernel_deal(self, rows: np.ndarray) -> None:
        kernels.slot_deal(rows, self.decks, self.next, self.slots, self.unseen_counts, self.obs,
                          self.layout.index, self.game.pack_size, self._ranks)  # fmt: skip

    def _deal(self, rows: np.ndarray) -> None:
        decks = self.decks[rows]
        k, p, lay = len(rows), self.game.pack_size, self.layout
        self.next[rows] = 4
        self.slots[rows] = decks[:, :4]
        stock = decks[:, 4:]
        local = np.arange(k)[:, None]
        self.unseen_counts[rows] = _count(local, stock, k)
        self.obs[rows] = 0.0
        flat = self.obs.reshape(-1)
        base = rows[:, None] * lay.size
        flat[(base + _SLOT_BASE[p] + self._index[decks[:, :4]]).ravel()] = 1.0
        flat[(base + lay.unseen.start + self._index[stock]).ravel()] = 1.0
        self._write_counts(rows)

    def _legal(self, rows: Rows) -> np.ndarray:
        s = self.slots[rows] % 53  # EMPTY (-1) -> 52, the table's "matches nothing" row
        matches = self._match.reshape(-1)[s[:, _PAIR_I] * 53 + s[:, _PAIR_J]]  # (k, 6), one gather
        return self._mask_table[(matches << _BITS).sum(axis=1)]

    def _kernel_advance(self, active: np.ndarray, actions: np.ndarray) -> np.ndarray:
        return kernels.slot_play(active, actions, self.decks, self.next, self.slots, self.unseen_counts,
                                 self.obs, self.masks, COVER, self.layout.index, self._match,
                                 self._mask_table, self.game.pack_size, self._ranks)  # fmt: skip

    def _play(self, active: np.ndarray, actions: np.ndarray) -> None:
        # Every env goes through the same array operations; inactive ones "play" NO_MOVE, which
        # covers nothing, so their state and observation stay exactly as they were.
        p, n = self.game.pack_size, self.num_envs
        moves = np.where(active, actions, NO_MOVE)
        cover = COVER[moves]
        pos = self.next[:, None] + OFFSET[moves]
        dealt = cover & (pos < p)
        new = np.where(dealt, self.decks.reshape(-1)[self._row_ids * p + np.minimum(pos, p - 1)], EMPTY)
        old = self.slots
        # Observation, by flat index: covered cards off, dealt cards on and no longer unseen.
        flat = self.obs.reshape(-1)
        base = self._row_base + _SLOT_BASE[p]
        flat[(base + self._index[old])[cover]] = 0.0
        where = self._index[new]
        flat[(base + where)[dealt]] = 1.0
        flat[(self._row_base + self.layout.unseen.start + where)[dealt]] = 0.0
        self.unseen_counts -= _count(self._row_ids, np.where(dealt, new, 0), n, weights=dealt)
        self.slots = np.where(cover, new, old)
        self.next = np.minimum(self.next + SIZE[moves], p)
        self._write_counts(ALL)

    def _write_counts(self, rows: Rows) -> None:
        """The stock size and per-slot match counts (the same float64 numbers the single env casts);
        they are the last columns of the observation."""
        p, lay = self.game.pack_size, self.layout
        slots = self.slots[rows]
        empty = slots == EMPTY
        # One gather of the unseen counts: per slot its suit's, then its rank's.
        cols = slots // 13
        if lay.rank_match is not None:
            cols = np.concatenate([cols, 4 + slots % 13], axis=1)
            empty = np.concatenate([empty, empty], axis=1)
        flat = self.unseen_counts[rows].reshape(-1)
        picked = flat[np.arange(len(slots))[:, None] * 17 + np.where(empty, 0, cols)]
        values = np.where(empty, 0.0, picked / _DIVISORS[p][: cols.shape[1]])
        self.obs[rows, lay.stock] = (p - self.next[rows]) / (p - 4)
        self.obs[rows, lay.stock + 1 :] = values

    def _cards_left(self, rows: Rows) -> np.ndarray:
        return self.game.pack_size - self.next[rows] + (self.slots[rows] != EMPTY).sum(axis=1)

    def _won(self, rows: np.ndarray) -> np.ndarray:
        dealt = self.next[rows] >= self.game.pack_size
        if not self.game.win_needs_clear:
            return dealt
        return dealt & (self.slots[rows] == EMPTY).all(axis=1)

    def state(self, i: int) -> SlotState:
        return SlotState(tuple(self.decks[i].tolist()), int(self.next[i]),
                         tuple(self.slots[i].tolist()))  # type: ignore[arg-type]  # fmt: skip


class QuadratVectorEnv(SlotVectorEnv):
    """``gym.make_vec("quadrat_env/Quadrat-v0", num_envs=N)``: N Quadrat deals as arrays."""

    single_env_class = QuadratEnv

    def __init__(self, num_envs: int = 1, **kwargs: Any) -> None:
        super().__init__(num_envs, **kwargs)


class ZudeckenVectorEnv(SlotVectorEnv):
    """``gym.make_vec("quadrat_env/Zudecken-v0", num_envs=N)``: N Zudecken deals as arrays."""

    single_env_class = ZudeckenEnv

    def __init__(self, num_envs: int = 1, **kwargs: Any) -> None:
        super().__init__(num_envs, **kwargs)
