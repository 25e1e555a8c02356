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
columns sorted (rank renamings are the column orders; ``exact_key``). A
mean is summed from its least term up, so a value does not depend on which cards stood for its
class when it was first reached.

A whole solve runs one search a core, all over one memo (``exact_memo``):
each takes the moves and draws in its own rotation, and uses what the others have memoised, so
the cores share the work without dividing it up in advance; they find the same values to the bit.

Rules (the env's, ``quadrat_env/Zudecken-v0``): a group of two to four upcards (``cover="pairs"``:
two), each sharing a suit or a rank with another of the group, may be covered; the covered slots
are refilled from the stock. ``win="cleared"``: won when stock and table are empty; ``"dealt"``:
when the stock is. ``python -m quadrat_env.agents.zudecken.exact --ranks N``: the value (12 digits),
positions, time, memory.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from collections.abc import Callable

import numba
import numpy as np
from quadrat_env.agents.zudecken.exact_key import SUITS, columns_into, compact, key_cells, key_into, popcount
from quadrat_env.agents.zudecken.exact_memo import (
    DONE,
    FULL,
    PAUSE,
    STOP,
    empty,
    entries,
    insert,
    load,
    lookup,
    put,
    store,
)
from quadrat_env.agents.zudecken.exact_parts import (
    BASE,
    COLS,
    FIRST,
    GROUPS,
    MAX_RANKS,
    MIN_RANKS,
    ORDER,
    REP,
    SECOND,
    SIG,
    WEIGHT,
    WORK,
    classes,
    legal_groups,
    pair,
    sum_sorted,
    usable_cores,
)
from quadrat_env.agents.zudecken.exact_threads import run_searches

from quadrat_env.arguments import description_of
from quadrat_env.core.checks import choice, whole
from quadrat_env.core.jit import fingerprint
from quadrat_env.extras import command

WINS = ("cleared", "dealt")
COVERS = ("groups", "pairs")
#: RULES: what a search is told, each thread in an int64 array of its own (``me``): the pack and
#: rules, which thread it is and of how many.
RULES = N, MAX_GROUP, NEED_CLEAR, SYMMETRIC, THREAD, THREADS, LEAN = range(7)
#: a search stops when another thread is done with it, when the memo is full (to grow it), or when
#: paused (a checkpoint); each thread looks at the memo's fill every CHECK_EVERY entries it writes
CHECK_EVERY = 256


# Recursive, so compiled without the disk cache: numba cannot load a cached recursive function.
@numba.njit(nogil=True)
def _value(table, unseen, me, keys, vals, shared, iwork, fwork, cache, depth):  # noqa: ANN001, ANN202
    """The value of a position; -1.0 once the search is stopped (the memo is full, another thread
    is done, or the solve pauses for a checkpoint). ``me``: the rules and this thread (``RULES``);
    ``keys``, ``vals``, ``shared``: the memo (``exact_memo``); ``iwork[depth]`` and ``fwork[depth]``
    hold this call's working arrays (``WORK``), so that a call allocates nothing."""
    if load(shared, STOP, None):
        return -1.0
    n = me[N]
    row = iwork[depth]
    base = columns_into(table, unseen, n, row[BASE : BASE + n])
    up = popcount(table)
    kept = up <= 2 or not me[LEAN]  # lean: only where a move leads (at most two upcards) is memoised
    hi, lo = np.int64(-1), np.int64(-1)
    if kept:
        hi, lo = (
            key_into(base, row[SIG : SIG + SUITS], row[COLS : COLS + n]) if me[SYMMETRIC] else (table, unseen)
        )
        if keys.shape[1] == 1:  # lean with symmetry: one int a key
            hi, lo = compact(hi, lo, n), np.int64(0)
        v = lookup(keys, vals, hi, lo)
        if v == v:  # not NaN: memoised
            return v
    if up < 4 and unseen != 0:
        result = _refill(table, unseen, base, me, keys, vals, shared, iwork, fwork, cache, depth)
    else:
        result = _decide(table, unseen, me, keys, vals, shared, iwork, fwork, cache, depth)
    if result < 0 or not kept:
        return result
    before = entries(shared, me[THREAD])
    new = put(keys, vals, shared, me[THREAD], hi, lo, result)
    if new and before % CHECK_EVERY == 0 and entries(shared, -1) >= keys.shape[0] // 4 * 3:
        store(shared, STOP, None, FULL)  # filled to 3/4: every thread stops, and the memo grows
    return result


# Thread ``me[THREAD]`` of ``me[THREADS]`` takes the moves and draws in its own rotation, so that
# threads sharing the memo start on different positions and seldom work on the same one at once.
@numba.njit(nogil=True)
def _decide(table, unseen, me, keys, vals, shared, iwork, fwork, cache, depth):  # noqa: ANN001, ANN202
    """The best coverable group's value; with none, whether the game is won."""
    groups = iwork[depth][GROUPS:REP]
    count = legal_groups(table, me[N], me[MAX_GROUP], groups)
    result = 1.0 if count == 0 and unseen == 0 and (table == 0 or not me[NEED_CLEAR]) else 0.0
    shift = me[THREAD] * count // me[THREADS]
    for j in range(count):
        g = groups[j + shift - count if j + shift >= count else j + shift]
        v = _value(table & ~g, unseen, me, keys, vals, shared, iwork, fwork, cache, depth + 1)
        if v < 0:
            return v
        result = max(result, v)
    return result


@numba.njit(nogil=True)
def _refill(table, unseen, base, me, keys, vals, shared, iwork, fwork, cache, depth):  # noqa: ANN001, ANN202
    """The mean over the next card, each unseen one alike. Two unseen cards of one suit whose rank
    columns are equal lead to positions equal up to swapping those ranks: each such class is
    valued once, with its size as weight (without symmetry, every card on its own). Lean, the last
    two cards of a refill are drawn together (``_refill_pair``)."""
    n, row, found = me[N], iwork[depth], fwork[depth]
    m = classes(unseen, base, n, me[SYMMETRIC], row)
    if me[LEAN] and popcount(table) == 2 and popcount(unseen) >= 2:
        return _refill_pair(table, unseen, m, me, keys, vals, shared, iwork, fwork, cache, depth)
    weight, first, order = row[WEIGHT : WEIGHT + SUITS * n], row[FIRST : FIRST + SUITS * n], row[ORDER:]
    shift = me[THREAD] * m // me[THREADS]
    for j in range(m):
        at = j + shift - m if j + shift >= m else j + shift
        bit = np.int64(1) << first[order[at]]
        v = _value(table | bit, unseen & ~bit, me, keys, vals, shared, iwork, fwork, cache, depth + 1)
        if v < 0:
            return v
        found[at] = weight[order[at]] * v
    return sum_sorted(found[:m]) / popcount(unseen)


@numba.njit(nogil=True)
def _refill_pair(table, unseen, m, me, keys, vals, shared, iwork, fwork, cache, depth):  # noqa: ANN001, ANN202
    """The mean over the two cards that fill a table of two upcards, drawn together: each pair of
    classes once, weighted by the pairs of cards it stands for. Cards of one class are alike; two
    classes of one rank set (two suits) give two kinds of pair: the same rank, or two ranks."""
    n, row, found = me[N], iwork[depth], fwork[depth]
    weight, first, second, order = (row[WEIGHT:], row[FIRST:], row[SECOND:], row[ORDER:])
    terms = 0
    for a in range(m):
        ka = order[a]
        for b in range(a, m):
            kb = order[b]
            for kind in range(2):
                w, x, y = pair(ka, kb, kind, weight, first, second, n, me[SYMMETRIC])
                if w == 0:
                    continue
                cards = (np.int64(1) << x) | (np.int64(1) << y)
                v = _full(
                    table | cards, unseen & ~cards, me, keys, vals, shared, iwork, fwork, cache, depth + 1
                )
                if v < 0:
                    return v
                found[terms] = w * v
                terms += 1
    u = popcount(unseen)
    return sum_sorted(found[:terms]) / (u * (u - 1) // 2)


@numba.njit(nogil=True)
def _full(table, unseen, me, keys, vals, shared, iwork, fwork, cache, depth):  # noqa: ANN001, ANN202
    """A full table's value (``_decide``), kept in this thread's own lossy cache (``cache``: rows of
    key, key, value; a slot's newest position wins): a full table is reached again from each pair
    of its upcards, and valuing its groups again costs more than keying it once."""
    if cache.shape[0] <= 1:
        return _decide(table, unseen, me, keys, vals, shared, iwork, fwork, cache, depth)
    n, row = me[N], iwork[depth]
    if me[SYMMETRIC]:
        base = columns_into(table, unseen, n, row[BASE : BASE + n])
        hi, lo = key_into(base, row[SIG : SIG + SUITS], row[COLS : COLS + n])
    else:
        hi, lo = table, unseen
    h = (hi * 0x9E3779B97F4A7C15 + lo * 0x2B2AE3D27D4EB4F) & 0x7FFFFFFFFFFFFFFF
    slot = (h ^ (h >> 29)) & (cache.shape[0] - 1)
    if cache[slot, 0] == hi and cache[slot, 1] == lo:  # both below 2**53: exact as floats
        return cache[slot, 2]
    v = _decide(table, unseen, me, keys, vals, shared, iwork, fwork, cache, depth)
    if v >= 0:
        cache[slot, 0], cache[slot, 1], cache[slot, 2] = hi, lo, v
    return v


def code_fingerprint() -> str:
    """A fingerprint of the search's compiled code (and all it calls): values saved by other code differ."""
    return fingerprint(_value.py_func)


class ExactSolver:
    """Optimal values of Zudecken positions for a pack of 4 suits x ``n_ranks`` ranks (card
    ``suit * n_ranks + rank``; with 13 ranks, the env's card numbers). Values are memoised. A whole
    solve (``win_rate``) runs ``threads`` searches over one memo (default: one a usable core).
    ``lean``: only positions with at most two upcards are memoised, under one int a key, and the
    last two cards of a refill are drawn together (a 12th of the memo at 7 ranks, for more time), and
    each thread keeps the values of ``cache_slots`` full tables it valued last (24 bytes a slot)."""

    def __init__(self, n_ranks: int = 13, win: str = "cleared", cover: str = "groups",
                 symmetric: bool = True, threads: int | None = None, lean: bool = False,
                 cache_slots: int = 1 << 20) -> None:  # fmt: skip
        if whole("n_ranks", n_ranks, minimum=MIN_RANKS) > MAX_RANKS:
            raise ValueError(f"n_ranks must be {MIN_RANKS}..{MAX_RANKS}, got {n_ranks}")
        choice("win", win, WINS), choice("cover", cover, COVERS)
        self.threads = usable_cores() if threads is None else whole("threads", threads, minimum=1)
        if whole("cache_slots", cache_slots, minimum=1) & (cache_slots - 1):
            raise ValueError(f"cache_slots must be a power of two, got {cache_slots}")
        self.n, self.win, self.cover, self.symmetric = int(n_ranks), win, cover, symmetric
        self.max_group = 4 if cover == "groups" else 2
        self.need_clear = win == "cleared"
        self.all_cards = (1 << (SUITS * self.n)) - 1
        # each thread's own: what it is told (RULES), and a row of working arrays per level of the
        # search; a level draws one card or covers two or more, so a line of play is at most
        # 4n + 2n levels deep (rows are not bounds-checked)
        self.lean = bool(lean)
        told = (self.n, self.max_group, self.need_clear, self.symmetric, 0, 1, self.lean)
        self.work = [
            (np.array(told, dtype=np.int64), np.zeros((6 * self.n + 2, WORK), dtype=np.int64),
             np.zeros((6 * self.n + 2, (SUITS * self.n) ** 2)),  # a term per kind of pair at most
             np.full((cache_slots if self.lean else 1, 3), -1.0))
            for _ in range(self.threads)
        ]  # fmt: skip
        self.width = 1 if self.lean and symmetric else 2  # lean: compact keys, 16 bytes a position
        self.keys, self.vals, self.shared = empty(1 << 16, self.threads, self.width)

    def value(self, table: int, unseen: int, threads: int = 1, pause_every: float | None = None,
              on_pause: Callable[[], None] | None = None) -> float:  # fmt: skip
        """The optimal win probability from the position (card masks), before any refill it needs,
        searched by ``threads`` threads sharing the memo (at most the solver's). ``on_pause`` is called
        every ``pause_every`` seconds with the searches stopped (the memo then holds every value found
        so far: a checkpoint's moment), and once more on Ctrl-C before the KeyboardInterrupt goes on."""
        threads = min(threads, self.threads)
        while True:
            if entries(self.shared, -1) >= self.keys.shape[0] // 4 * 3:
                self._grow()
            self.shared[STOP] = 0
            if threads == 1 and pause_every is None and on_pause is None:  # no clock: no thread needed
                found = [self._search(table, unseen, 0, 1)]
            else:
                try:
                    found = run_searches(
                        lambda t: self._search(table, unseen, t, threads), threads, self.shared, pause_every
                    )
                except KeyboardInterrupt:
                    if on_pause is not None:
                        on_pause()
                    raise
            done = [v for v in found if v >= 0]
            if done:  # every thread that finishes finds the same value
                return done[0]
            if self.shared[STOP] == PAUSE and on_pause is not None:
                on_pause()
            # stopped with none done: paused, or the memo is full (grown at the top of the loop)

    def _search(self, table: int, unseen: int, thread: int, threads: int) -> float:
        me, iwork, fwork, cache = self.work[thread]
        me[THREAD], me[THREADS] = thread, threads
        v = _value(
            np.int64(table), np.int64(unseen), me, self.keys, self.vals, self.shared, iwork, fwork, cache, 0
        )
        if v >= 0:
            self.shared[STOP] = DONE  # the others need not go on
        return float(v)

    def _grow(self, capacity: int = 0) -> None:
        """A memo twice the size (or ``capacity`` slots), holding every value found so far."""
        keys, vals = self.keys, self.vals
        self.keys, self.vals, self.shared = empty(max(capacity, 2 * keys.shape[0]), self.threads, self.width)
        insert(self.keys, self.vals, self.shared, keys, vals)

    def reserve(self, slots: int) -> None:
        """Room for the positions of a whole solve at once (``slots``: a power of two): no doubling of
        the memo, and no second copy of it, midway."""
        if self.keys.shape[0] < slots:
            self._grow(slots)

    def win_rate(self) -> float:
        """From a uniformly random deal: the mean over the first four cards of the best play."""
        # A whole solve memoises at most about 400 * 4**n positions (24,000 at 4 ranks, 24.4M at 8): room
        # for them at once, up to 2**25 slots (800 MB), spares the memo most of its doublings.
        self.reserve(1 << min(2 * self.n + 9, 25))
        return self.value(0, self.all_cards, self.threads)

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
        return int(entries(self.shared, -1))

    def census(self) -> np.ndarray:
        """The memoised positions counted by upcards (rows 0-4) and unseen cards (columns)."""
        up, unseen = key_cells(self.keys, self.n, self.symmetric)
        used = self.keys[:, 0] != -1
        out = np.zeros((5, SUITS * self.n + 1), dtype=np.int64)
        np.add.at(out, (up[used], unseen[used]), 1)
        return out

    def afterstates(self) -> tuple[np.ndarray, np.ndarray]:
        """The memoised positions with at most two upcards (where every move leads, and the start):
        their keys and values, enough for every later move choice (``preload``)."""
        up, _ = key_cells(self.keys, self.n, self.symmetric)
        keep = (self.keys[:, 0] != -1) & (up <= 2)
        return self.keys[keep], self.vals[keep]

    def preload(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Memoise positions given by their keys (from ``afterstates`` of a solver of the same
        pack and rules) and values."""
        while (self.positions + len(keys)) * 4 > self.keys.shape[0] * 3:
            self._grow()
        insert(self.keys, self.vals, self.shared, np.ascontiguousarray(keys), np.ascontiguousarray(values))


def optimal_win_rate(n_ranks: int = 13, win: str = "cleared", cover: str = "groups") -> float:
    """The optimal probability of winning Zudecken from a uniformly random deal of 4 suits x
    ``n_ranks`` ranks, with the env's rules (see the module docstring)."""
    return ExactSolver(n_ranks, win, cover).win_rate()


@command
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=description_of(__doc__))
    p.add_argument("--ranks", type=int, default=6, help=f"ranks a suit, {MIN_RANKS}..{MAX_RANKS} (default 6)")
    p.add_argument("--win", choices=WINS, default="cleared")
    p.add_argument("--cover", choices=COVERS, default="groups")
    p.add_argument(
        "--threads", type=int, help=f"searches sharing the memo (default: the usable cores, {usable_cores()})"
    )
    args = p.parse_args(argv)
    try:
        solver = ExactSolver(args.ranks, args.win, args.cover, threads=args.threads)
    except ValueError as err:
        p.error(str(err))
    start = time.perf_counter()
    value = solver.win_rate()
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    census = solver.census()
    print(f"Zudecken, 4 suits x {args.ranks} ranks, win={args.win}, cover={args.cover}: optimal win rate "
          f"{value:#.12g}; {solver.positions:,} canonical positions, {seconds:.1f} s on {solver.threads} "
          f"thread{'s' * (solver.threads > 1)}, peak memory {peak:.0f} MB")  # fmt: skip
    # what a search that keeps fewer positions would keep: the positions after a move (at most two
    # upcards), and the positions of the largest stock size (one layer of a layer-by-layer search)
    print(
        f"positions with at most 2 upcards: {census[:3].sum():,}; "
        f"the most at one number of unseen cards: {census.sum(0).max():,}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
