"""Zudecken solved exactly: the optimal player's win probability, by expectimax over what a player sees.

    optimal_win_rate(n_ranks=6) -> 0.818695369460...   (4 suits x 6 ranks, a uniformly random deal)

A player sees the upcards and the set of unseen cards (their order is hidden); every order of the
unseen cards is equally likely. So a position is a pair of card sets, the table ``T`` and the
unseen ``U``, and its value under optimal play is

* a decision (a full table, or no stock left): the best legal group's value after covering it,
  or, with no group, 1 if the game is won and 0 if not;
* a refill (a slot to fill and stock left): the mean over the next card ``c`` in ``U`` of the
  value with ``c`` turned up. Drawing the refill one card at a time gives the same distribution as
  drawing the cards together (slots are alike), with far fewer successors per position.

Values are memoised under the game's symmetry: matching only asks whether two cards share a suit or
a rank, so renaming suits or ranks changes no value. A position is a grid of 4 suits x n ranks,
each cell covered, up or unseen; its key is the least, over the 24 orders of the suits, of its rank
columns sorted (rank renamings are the column orders).

Rules (the env's, ``quadrat_env/Zudecken-v0``): a group of two to four upcards (``cover="pairs"``:
two), each sharing a suit or a rank with another of the group, may be covered; the covered slots
are refilled from the stock. ``win="cleared"``: won when stock and table are empty; ``"dealt"``:
when the stock is. ``python -m quadrat_env.agents.exact --ranks N``: the value (12 digits),
positions, time, memory.
"""

from __future__ import annotations

import argparse
import itertools
import resource
import sys
import time

import numba
import numpy as np
from quadrat_env.agents.exact_memo import insert, rehash, slot

from quadrat_env.core.checks import choice, whole
from quadrat_env.core.jit import jit
from quadrat_env.extras import command

SUITS = 4
WINS = ("cleared", "dealt")
COVERS = ("groups", "pairs")
MIN_RANKS, MAX_RANKS = 1, 13
#: SUIT_PERM[p, code]: a rank column's code (base 3 over the 4 suits: 0 covered, 1 up, 2 unseen)
#: with its suits reordered by the p-th of the 24 permutations.
SUIT_PERM = np.array([[sum(((code // 3**s) % 3) * 3 ** perm[s] for s in range(SUITS))
                       for code in range(3**SUITS)]
                      for perm in itertools.permutations(range(SUITS))], dtype=np.int64)  # fmt: skip
#: The working arrays of one call of the search, side by side in a row of ``WORK``: where each
#: starts (sized for the largest pack): column codes, suit signature, sorted columns, groups (11:
#: the most groups of four upcards), rank classes, card weights, first card of each class.
_BASE, _SIG, _COLS, _GROUPS = 0, MAX_RANKS, MAX_RANKS + SUITS, 2 * MAX_RANKS + SUITS
_REP = _GROUPS + 11
_WEIGHT = _REP + MAX_RANKS
_FIRST = _WEIGHT + SUITS * MAX_RANKS
WORK = _FIRST + SUITS * MAX_RANKS
#: SUIT_AT[p, j]: the suit that the p-th permutation puts in place j.
SUIT_AT = np.array([np.argsort(perm) for perm in itertools.permutations(range(SUITS))], dtype=np.int64)


@jit
def _popcount(x):  # noqa: ANN001, ANN202
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@jit
def columns(table, unseen, n):  # noqa: ANN001, ANN201
    """Each rank's column code: base 3 over the suits, 0 covered, 1 up, 2 unseen."""
    return _columns_into(table, unseen, n, np.empty(n, dtype=np.int64))


@jit
def _columns_into(table, unseen, n, base):  # noqa: ANN001, ANN202
    for r in range(n):
        code, weight = 0, 1
        for s in range(SUITS):
            bit = np.int64(1) << (s * n + r)
            code += weight * (1 if table & bit else (2 if unseen & bit else 0))
            weight *= 3
        base[r] = code
    return base


@jit
def canonical_key(base):  # noqa: ANN001, ANN201
    """The key of a position from its column codes (two ints): equal exactly for positions that
    are equal up to renaming suits and ranks."""
    return _key_into(base, np.empty(SUITS, dtype=np.int64), np.empty(base.shape[0], dtype=np.int64))


@jit
def _key_into(base, sig, cols):  # noqa: ANN001, ANN202
    """:func:`canonical_key` with its working arrays given (the search allocates nothing a call)."""
    n = base.shape[0]
    # Only orders that sort the suits by how many up and unseen cards they hold need be tried:
    # those counts move with the suits, so the least over these orders is a key all the same.
    sig[:] = 0
    for r in range(n):
        code = base[r]
        for s in range(SUITS):
            cell = code % 3
            code //= 3
            sig[s] += 1 if cell == 1 else (64 if cell == 2 else 0)
    best_hi, best_lo = np.int64(-1), np.int64(-1)
    for p in range(SUIT_PERM.shape[0]):
        at = SUIT_AT[p]
        if sig[at[0]] > sig[at[1]] or sig[at[1]] > sig[at[2]] or sig[at[2]] > sig[at[3]]:
            continue
        for r in range(n):  # insertion sort: a handful of columns
            v = SUIT_PERM[p, base[r]]
            j = r
            while j > 0 and cols[j - 1] > v:
                cols[j] = cols[j - 1]
                j -= 1
            cols[j] = v
        hi, lo = np.int64(0), np.int64(0)
        for r in range(n):  # 7 bits a column: the first 6 in hi, the rest in lo
            if r < 6:
                hi = hi * 128 + cols[r]
            else:
                lo = lo * 128 + cols[r]
        if best_hi < 0 or hi < best_hi or (hi == best_hi and lo < best_lo):
            best_hi, best_lo = hi, lo
    return best_hi, best_lo


@jit
def canonical(table, unseen, n):  # noqa: ANN001, ANN201
    """The key of a position given as card masks."""
    return canonical_key(columns(table, unseen, n))


@jit
def legal_groups(table, n, max_group, out):  # noqa: ANN001, ANN201
    """The coverable groups of ``table`` as card masks into ``out``; how many."""
    cards = np.empty(4, dtype=np.int64)
    k = 0
    for c in range(SUITS * n):
        if table >> c & 1:
            cards[k] = c
            k += 1
    count = 0
    for sub in range(1, 1 << k):
        size = _popcount(sub)
        if size < 2 or size > max_group:
            continue
        ok = True
        for i in range(k):
            if not sub >> i & 1:
                continue
            has = False
            for j in range(k):
                if j != i and sub >> j & 1:
                    a, b = cards[i], cards[j]
                    if a // n == b // n or a % n == b % n:
                        has = True
                        break
            if not has:
                ok = False
                break
        if ok:
            mask = np.int64(0)
            for i in range(k):
                if sub >> i & 1:
                    mask |= np.int64(1) << cards[i]
            out[count] = mask
            count += 1
    return count


# Recursive, so compiled without the disk cache: numba cannot load a cached recursive function.
@numba.njit(nogil=True)
def _value(table, unseen, n, max_group, need_clear, keys, vals, symmetric, work, depth):  # noqa: ANN001, ANN202
    """The value of a position; -1.0 once the memo is full (the caller retries with a larger one).
    ``work[depth]`` holds this call's working arrays (:data:`WORK`), so that a call allocates nothing."""
    row = work[depth]
    base = _columns_into(table, unseen, n, row[_BASE : _BASE + n])
    hi, lo = (
        _key_into(base, row[_SIG : _SIG + SUITS], row[_COLS : _COLS + n]) if symmetric else (table, unseen)
    )
    i = slot(keys, hi, lo)
    if keys[i, 0] != -1:
        return vals[i]
    if _popcount(table) < 4 and unseen != 0:
        result = _refill(table, unseen, base, n, max_group, need_clear, keys, vals, symmetric, work, depth)
    else:
        groups = row[_GROUPS:_REP]
        count = legal_groups(table, n, max_group, groups)
        result = 1.0 if count == 0 and unseen == 0 and (table == 0 or not need_clear) else 0.0
        for g in range(count):
            v = _value(table & ~groups[g], unseen, n, max_group, need_clear, keys, vals, symmetric, work,
                       depth + 1)  # fmt: skip
            if v < 0:
                return v
            result = max(result, v)
    if result < 0 or vals[-1] >= keys.shape[0] // 4 * 3:  # vals[-1]: entries so far
        return -1.0
    i = slot(keys, hi, lo)  # the recursion above may have filled the slot found before it
    keys[i, 0], keys[i, 1], vals[i] = hi, lo, result
    vals[-1] += 1
    return result


@numba.njit(nogil=True)
def _refill(table, unseen, base, n, max_group, need_clear, keys, vals, symmetric, work, depth):  # noqa: ANN001, ANN202
    """The mean over the next card, each unseen one alike. Two unseen cards of one suit whose rank
    columns are equal lead to positions equal up to swapping those ranks: each such class is
    valued once, with its size as weight (without symmetry, every card on its own)."""
    row = work[depth]
    rep = row[_REP : _REP + n]  # each rank's first rank with the same column
    for r in range(n):
        rep[r] = r
        for q in range(r):
            if base[q] == base[r]:
                rep[r] = q
                break
    weight, first = row[_WEIGHT : _WEIGHT + SUITS * n], row[_FIRST : _FIRST + SUITS * n]
    weight[:] = 0
    first[:] = -1
    for c in range(SUITS * n):
        if unseen >> c & 1:
            k = (c // n) * n + rep[c % n] if symmetric else c
            weight[k] += 1
            if first[k] < 0:
                first[k] = c
    total = 0.0
    for k in range(SUITS * n):
        if weight[k]:
            bit = np.int64(1) << first[k]
            v = _value(table | bit, unseen & ~bit, n, max_group, need_clear, keys, vals, symmetric, work,
                       depth + 1)  # fmt: skip
            if v < 0:
                return v
            total += weight[k] * v
    return total / _popcount(unseen)


class ExactSolver:
    """Optimal values of Zudecken positions for a pack of 4 suits x ``n_ranks`` ranks (card
    ``suit * n_ranks + rank``; with 13 ranks, the env's card numbers). Values are memoised."""

    def __init__(self, n_ranks: int = 13, win: str = "cleared", cover: str = "groups",
                 symmetric: bool = True) -> None:  # fmt: skip
        if whole("n_ranks", n_ranks, minimum=MIN_RANKS) > MAX_RANKS:
            raise ValueError(f"n_ranks must be {MIN_RANKS}..{MAX_RANKS}, got {n_ranks}")
        choice("win", win, WINS), choice("cover", cover, COVERS)
        self.n, self.win, self.cover, self.symmetric = int(n_ranks), win, cover, symmetric
        self.max_group = 4 if cover == "groups" else 2
        self.need_clear = win == "cleared"
        self.all_cards = (1 << (SUITS * self.n)) - 1
        # a row of working arrays per level of the search; a level draws one card or covers two or
        # more, so a line of play is at most 4n + 2n levels deep (rows are not bounds-checked)
        self.work = np.zeros((6 * self.n + 2, WORK), dtype=np.int64)
        self._new_memo(1 << 16)

    def _new_memo(self, capacity: int) -> None:
        # keys (hi, lo), -1 where empty; vals[-1] counts the entries (filled to 3/4 at most)
        self.keys = np.full((capacity, 2), -1, dtype=np.int64)
        self.vals = np.zeros(capacity + 1, dtype=np.float64)

    def value(self, table: int, unseen: int) -> float:
        """The optimal win probability from the position (card masks), before any refill it needs."""
        while True:
            v = _value(np.int64(table), np.int64(unseen), self.n, self.max_group, self.need_clear, self.keys,
                       self.vals, self.symmetric, self.work, 0)  # fmt: skip
            if v >= 0:
                return float(v)
            self._grow()

    def _grow(self) -> None:
        """A memo twice the size, holding every value found so far."""
        keys, vals = self.keys, self.vals
        self._new_memo(2 * keys.shape[0])
        rehash(keys, vals, self.keys, self.vals)

    def win_rate(self) -> float:
        """From a uniformly random deal: the mean over the first four cards of the best play."""
        return self.value(0, self.all_cards)

    def groups(self, table: int) -> list[int]:
        """The coverable groups of ``table`` (card masks)."""
        out = np.empty(11, dtype=np.int64)
        count = legal_groups(np.int64(table), self.n, self.max_group, out)
        return [int(g) for g in out[:count]]

    def move_values(self, table: int, unseen: int) -> dict[int, float]:
        """Each coverable group's value (the position after covering it, before the refill)."""
        return {g: self.value(table & ~g, unseen) for g in self.groups(table)}

    def won(self, table: int, unseen: int) -> bool:
        """Whether a position with no coverable group is won."""
        return unseen == 0 and (table == 0 or not self.need_clear)

    @property
    def positions(self) -> int:
        """Positions memoised so far (canonical ones, with symmetry)."""
        return int(self.vals[-1])

    def census(self) -> np.ndarray:
        """The memoised positions counted by upcards (rows 0-4) and unseen cards (columns)."""
        up, unseen = _cells(self.keys, self.n, self.symmetric)
        used = self.keys[:, 0] != -1
        out = np.zeros((5, SUITS * self.n + 1), dtype=np.int64)
        np.add.at(out, (up[used], unseen[used]), 1)
        return out

    def afterstates(self) -> tuple[np.ndarray, np.ndarray]:
        """The memoised positions with at most two upcards (where every move leads, and the start):
        their keys and values, enough for every later move choice (:meth:`preload`)."""
        up, _ = _cells(self.keys, self.n, self.symmetric)
        keep = (self.keys[:, 0] != -1) & (up <= 2)
        return self.keys[keep], self.vals[:-1][keep]

    def preload(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Memoise positions given by their keys (from :meth:`afterstates` of a solver of the same
        pack and rules) and values."""
        while (self.positions + len(keys)) * 4 > self.keys.shape[0] * 3:
            self._grow()
        insert(self.keys, self.vals, np.ascontiguousarray(keys), np.ascontiguousarray(values))


@jit
def _cells(keys, n, symmetric):  # noqa: ANN001, ANN202
    """Each memo entry's number of upcards and of unseen cards (0 for empty entries)."""
    up, unseen = np.zeros(keys.shape[0], dtype=np.int64), np.zeros(keys.shape[0], dtype=np.int64)
    for i in range(keys.shape[0]):
        if keys[i, 0] == -1:
            continue
        if not symmetric:  # the keys are the card masks themselves
            up[i], unseen[i] = _popcount(keys[i, 0]), _popcount(keys[i, 1])
            continue
        for word, width in ((0, min(n, 6)), (1, max(n - 6, 0))):  # 6 columns in hi, the rest in lo
            x = keys[i, word]
            for _ in range(width):
                code = x % 128
                x //= 128
                for _s in range(SUITS):
                    up[i] += code % 3 == 1
                    unseen[i] += code % 3 == 2
                    code //= 3
    return up, unseen


def optimal_win_rate(n_ranks: int = 13, win: str = "cleared", cover: str = "groups") -> float:
    """The optimal probability of winning Zudecken from a uniformly random deal of 4 suits x
    ``n_ranks`` ranks, with the env's rules (see the module docstring)."""
    return ExactSolver(n_ranks, win, cover).win_rate()


@command
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ranks", type=int, default=6, help=f"ranks a suit, {MIN_RANKS}..{MAX_RANKS} (default 6)")
    p.add_argument("--win", choices=WINS, default="cleared")
    p.add_argument("--cover", choices=COVERS, default="groups")
    args = p.parse_args(argv)
    try:
        solver = ExactSolver(args.ranks, args.win, args.cover)
    except ValueError as err:
        p.error(str(err))
    start = time.perf_counter()
    value = solver.win_rate()
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    census = solver.census()
    print(
        f"Zudecken, 4 suits x {args.ranks} ranks, win={args.win}, cover={args.cover}: optimal win rate "
        f"{value:#.12g}; {solver.positions:,} canonical positions, {seconds:.1f} s, "
        f"peak memory {peak:.0f} MB"
    )
    # what a search that keeps fewer positions would keep: the positions after a move (at most two
    # upcards), and the positions of the largest stock size (one layer of a layer-by-layer search)
    print(
        f"positions with at most 2 upcards: {census[:3].sum():,}; "
        f"the most at one number of unseen cards: {census.sum(0).max():,}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
