"""The exact solver's pieces that call no search: the working arrays' layout, the coverable groups,
the unseen cards' classes, the kinds of pair of a two-card draw, the order-free sum of a mean, and
the cores a solve may use.
"""

from __future__ import annotations

import os

import numpy as np
from quadrat_env.agents.zudecken.exact_key import SUITS, popcount

from quadrat_env.core.jit import jit

MIN_RANKS, MAX_RANKS = 1, 13
#: The working arrays of one call of the search, side by side in a row of ``WORK``: where each
#: starts (sized for the largest pack): column codes, suit signature, sorted columns, groups (11:
#: the most groups of four upcards), rank classes, card weights, first card of each class, the
#: classes in order.
BASE, SIG, COLS, GROUPS = 0, MAX_RANKS, MAX_RANKS + SUITS, 2 * MAX_RANKS + SUITS
REP = GROUPS + 11
WEIGHT = REP + MAX_RANKS
FIRST = WEIGHT + SUITS * MAX_RANKS
ORDER = FIRST + SUITS * MAX_RANKS
SECOND = ORDER + SUITS * MAX_RANKS
WORK = SECOND + SUITS * MAX_RANKS


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
        size = popcount(sub)
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


@jit
def classes(unseen, base, n, symmetric, row):  # noqa: ANN001, ANN202
    """The unseen cards' classes (a suit and a set of ranks with equal columns) into ``row``: each
    class's size, first and second card, and the classes in order; how many."""
    rep = row[REP : REP + n]  # each rank's first rank with the same column
    for r in range(n):
        rep[r] = r
        for q in range(r):
            if base[q] == base[r]:
                rep[r] = q
                break
    weight, first = row[WEIGHT : WEIGHT + SUITS * n], row[FIRST : FIRST + SUITS * n]
    second = row[SECOND : SECOND + SUITS * n]
    weight[:] = 0
    first[:] = -1
    for c in range(SUITS * n):
        if unseen >> c & 1:
            k = (c // n) * n + rep[c % n] if symmetric else c
            weight[k] += 1
            if first[k] < 0:
                first[k] = c
            elif weight[k] == 2:
                second[k] = c
    order, m = row[ORDER : ORDER + SUITS * n], 0
    for k in range(SUITS * n):
        if weight[k]:
            order[m] = k
            m += 1
    return m


@jit
def pair(ka, kb, kind, weight, first, second, n, symmetric):  # noqa: ANN001, ANN202
    """One kind of pair from classes ``ka`` and ``kb`` (``kind`` 0 or 1): how many pairs of cards it
    stands for (0: none) and two cards standing for it."""
    if ka == kb:  # two cards of one class: two of its ranks
        return (weight[ka] * (weight[ka] - 1) // 2, first[ka], second[ka]) if kind == 0 else (0, 0, 0)
    if not symmetric or ka % n != kb % n:  # unrelated classes: any card of each
        return (weight[ka] * weight[kb], first[ka], first[kb]) if kind == 0 else (0, 0, 0)
    if kind == 0:  # one rank set in two suits: the same rank ...
        return weight[ka], first[ka], first[kb]
    return weight[ka] * (weight[ka] - 1), first[ka], second[kb]  # ... or two different ranks


@jit
def sum_sorted(terms):  # noqa: ANN001, ANN202
    """The sum from the least term up: the same float whichever cards stand for a position's class
    and whichever thread values it first, so every solve finds the same values to the bit."""
    terms.sort()
    total = 0.0
    for v in terms:
        total += v
    return total


def usable_cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
