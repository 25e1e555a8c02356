"""The exact solver's positions as rank columns, and their canonical key.

A position is a grid of 4 suits x n ranks, each cell covered, up or unseen; a rank's column is
its code in base 3 over the suits (0 covered, 1 up, 2 unseen). Matching only asks whether two
cards share a suit or a rank, so positions equal up to renaming suits and ranks have equal values:
the key is the least, over the orders of the suits, of the rank columns sorted, 7 bits a column
(the first 6 in one int, the rest in a second).
"""

from __future__ import annotations

import itertools

import numpy as np

from quadrat_env.core.jit import jit

SUITS = 4
#: SUIT_PERM[p, code]: a rank column's code (base 3 over the 4 suits: 0 covered, 1 up, 2 unseen)
#: with its suits reordered by the p-th of the 24 permutations.
SUIT_PERM = np.array([[sum(((code // 3**s) % 3) * 3 ** perm[s] for s in range(SUITS))
                       for code in range(3**SUITS)]
                      for perm in itertools.permutations(range(SUITS))], dtype=np.int64)  # fmt: skip
#: UP_IN[code], UNSEEN_IN[code]: a rank column's upcards and unseen cards.
UP_IN, UNSEEN_IN = (
    np.array([sum((code // 3**s) % 3 == cell for s in range(SUITS)) for code in range(3**SUITS)])
    for cell in (1, 2)
)
#: SUIT_AT[p, j]: the suit that the p-th permutation puts in place j.
SUIT_AT = np.array([np.argsort(perm) for perm in itertools.permutations(range(SUITS))], dtype=np.int64)
#: SIG_OF[code]: a rank column's share of its suits' counts, 16 bits a suit: 1 an upcard, 16 an
#: unseen card (at most 13 upcards a suit, so suits compare by unseen cards, then upcards).
SIG_OF = np.array([sum((1 if (code // 3**s) % 3 == 1 else 16 if (code // 3**s) % 3 == 2 else 0) << 16 * s
                       for s in range(SUITS)) for code in range(3**SUITS)], dtype=np.int64)  # fmt: skip


def _sorting() -> np.ndarray:
    """SORTING[ties]: how many permutations put four suits in order of their counts, then which,
    for each way ``ties`` (base 3, a digit a pair of suits: less, equal, greater) they compare."""
    table = np.zeros((3**6, 25), dtype=np.int64)
    for counts in itertools.product(range(4), repeat=SUITS):  # every way four counts can compare
        ties = 0
        for a, b in itertools.combinations(range(SUITS), 2):
            ties = ties * 3 + (counts[a] > counts[b]) - (counts[a] < counts[b]) + 1
        ok = [p for p, at in enumerate(SUIT_AT) if all(counts[at[j]] <= counts[at[j + 1]] for j in range(3))]
        table[ties, 0], table[ties, 1 : len(ok) + 1] = len(ok), ok
    return table


SORTING = _sorting()


@jit
def popcount(x):  # noqa: ANN001, ANN201
    """How many cards a mask holds."""
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@jit
def columns(table, unseen, n):  # noqa: ANN001, ANN201
    """Each rank's column code: base 3 over the suits, 0 covered, 1 up, 2 unseen."""
    return columns_into(table, unseen, n, np.empty(n, dtype=np.int64))


@jit
def columns_into(table, unseen, n, base):  # noqa: ANN001, ANN201
    """``columns`` into ``base``."""
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
    return key_into(base, np.empty(SUITS, dtype=np.int64), np.empty(base.shape[0], dtype=np.int64))


@jit
def key_into(base, sig, cols):  # noqa: ANN001, ANN201
    """``canonical_key`` with its working arrays given (the search allocates nothing a call)."""
    n = base.shape[0]
    # Only orders that sort the suits by how many up and unseen cards they hold need be tried:
    # those counts move with the suits, so the least over these orders is a key all the same.
    packed = 0
    for r in range(n):
        packed += SIG_OF[base[r]]
    for s in range(SUITS):
        sig[s] = packed >> (16 * s) & 0xFFFF
    ties = 0  # how the four suits' counts compare, pair by pair (SORTING)
    for a in range(SUITS):
        for b in range(a + 1, SUITS):
            ties = ties * 3 + (sig[a] > sig[b]) - (sig[a] < sig[b]) + 1
    best_hi, best_lo = np.int64(-1), np.int64(-1)
    for t in range(1, SORTING[ties, 0] + 1):
        p = SORTING[ties, t]
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


#: A compact key's field for "no upcard" (a cell is 0..51; 63 would let a key be -1, an empty slot).
NO_UP = 62


@jit
def compact(hi, lo, n):  # noqa: ANN001, ANN201
    """A canonical key (``key_into``'s two ints) of a position with at most two upcards as one int:
    the unseen cells of the sorted columns (4 bits a column), then the first and the second upcard's
    cell (6 bits each, ``NO_UP`` for none). Equal exactly when the two-int keys are."""
    unseen, ups = np.int64(0), np.int64(0)
    found = 0
    for r in range(n):
        code = (hi >> 7 * (min(n, 6) - 1 - r)) & 127 if r < 6 else (lo >> 7 * (n - 1 - r)) & 127
        for s in range(SUITS):
            cell = (code // 3**s) % 3
            if cell == 2:
                unseen |= np.int64(1) << (r * SUITS + s)
            elif cell == 1:
                ups |= np.int64(r * SUITS + s) << (6 * found)
                found += 1
    while found < 2:
        ups |= np.int64(NO_UP) << (6 * found)
        found += 1
    return unseen | (ups << 52)


@jit
def key_cells(keys, n, symmetric):  # noqa: ANN001, ANN201
    """Each memo entry's number of upcards and of unseen cards (0 for empty entries)."""
    up, unseen = np.zeros(keys.shape[0], dtype=np.int64), np.zeros(keys.shape[0], dtype=np.int64)
    for i in range(keys.shape[0]):
        if keys[i, 0] == -1:
            continue
        if not symmetric:  # the keys are the card masks themselves
            up[i], unseen[i] = popcount(keys[i, 0]), popcount(keys[i, 1])
            continue
        if keys.shape[1] == 1:  # compact (``compact``)
            x = keys[i, 0]
            unseen[i] = popcount(x & ((np.int64(1) << 52) - 1))
            up[i] = ((x >> 52) & 63 != NO_UP) + ((x >> 58) & 63 != NO_UP)
            continue
        for word, width in ((0, min(n, 6)), (1, max(n - 6, 0))):  # 6 columns in hi, the rest in lo
            x = keys[i, word]
            for _ in range(width):
                up[i] += UP_IN[x % 128]
                unseen[i] += UNSEEN_IN[x % 128]
                x //= 128
    return up, unseen
