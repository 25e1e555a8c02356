"""The exact solver's memo: positions' values in a hash table with open addressing, keyed by the
canonical key's two ints (or one compact int). ``keys[i, 0] == -1``: an empty slot; ``vals[i]``:
NaN until the value is written; ``shared[STOP]``: whether the search is to stop;
``shared[(t + 1) * PAD]``: the entries written by thread ``t``.

Several threads may search at once over one memo. A slot is claimed by an atomic compare-and-swap
of its first key word, so no two threads ever write one slot; the second word and the value follow.
A reader that finds the first word but not yet the second waits for it (two stores away), and one
that finds the key but not yet the value (NaN) computes the value itself: the same number, since a
position's value does not depend on who computes it. Shared words are read and written as atomic
(``monotonic``) loads and stores, plain moves on x86, so that the compiler neither tears nor
repeats them.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from quadrat_env.core.jit import jit

#: each thread's count a cache line apart from the others', so that counting does not bounce the
#: line between cores
PAD, STOP = 8, 0
#: What ``shared[STOP]`` says: go on (0), the memo is full (to grow it), another search is done, pause
#: (a checkpoint).
FULL, DONE, PAUSE = 1, 2, 3


def _pointer(context, builder, array_type, array, indices):  # noqa: ANN001, ANN202
    view = context.make_array(array_type)(context, builder, array)
    return cgutils.get_item_pointer(context, builder, array_type, view, indices)


@intrinsic
def claim(typingctx, keys, i, hi):  # noqa: ANN001, ANN201, ARG001
    """Atomically: ``keys[i, 0] = hi`` if it is -1. Returns the word that was there (-1: claimed)."""

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        array, index, word = args
        zero = context.get_constant(types.intp, 0)
        ptr = _pointer(context, builder, signature.args[0], array, [index, zero])
        empty = ir.Constant(ir.IntType(64), -1)
        pair = builder.cmpxchg(ptr, empty, word, ordering="seq_cst", failordering="seq_cst")
        return builder.extract_value(pair, 0)

    return types.int64(keys, types.intp, types.int64), codegen


@intrinsic
def load(typingctx, array, i, j):  # noqa: ANN001, ANN201, ARG001
    """``array[i, j]`` (``array[i]`` if ``j`` is None) as one atomic load."""

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        at = [args[1]] if isinstance(signature.args[2], types.NoneType) else [args[1], args[2]]
        ptr = _pointer(context, builder, signature.args[0], args[0], at)
        return builder.load_atomic(ptr, ordering="monotonic", align=8)

    return array.dtype(array, types.intp, j), codegen


@intrinsic
def store(typingctx, array, i, j, value):  # noqa: ANN001, ANN201, ARG001
    """``array[i, j] = value`` (``array[i]`` if ``j`` is None) as one atomic store."""

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        at = [args[1]] if isinstance(signature.args[2], types.NoneType) else [args[1], args[2]]
        ptr = _pointer(context, builder, signature.args[0], args[0], at)
        builder.store_atomic(args[3], ptr, ordering="monotonic", align=8)
        return context.get_dummy_value()

    return types.void(array, types.intp, j, array.dtype), codegen


@jit
def _start(keys, hi, lo):  # noqa: ANN001, ANN202
    """Where the probe for (hi, lo) starts."""
    h = (hi * 0x9E3779B97F4A7C15 + lo * 0x2B2AE3D27D4EB4F) & 0x7FFFFFFFFFFFFFFF
    return (h ^ (h >> 29)) & (keys.shape[0] - 1)


@jit
def _second(keys, i):  # noqa: ANN001, ANN202
    """The second key word of a claimed slot, once its claimer has written it."""
    lo = load(keys, i, 1)
    while lo == -1:
        lo = load(keys, i, 1)
    return lo


@jit
def lookup(keys, vals, hi, lo):  # noqa: ANN001, ANN202
    """The value memoised for (hi, lo); NaN if there is none yet."""
    mask = keys.shape[0] - 1
    i = _start(keys, hi, lo)
    while True:
        first = load(keys, i, 0)
        if first == -1:
            return np.nan
        if first == hi and (keys.shape[1] == 1 or _second(keys, i) == lo):
            return load(vals, i, None)
        i = (i + 1) & mask


@jit
def put(keys, vals, shared, thread, hi, lo, value):  # noqa: ANN001, ANN202
    """Memoise ``value`` for (hi, lo); True if it took a new slot."""
    mask = keys.shape[0] - 1
    i = _start(keys, hi, lo)
    while True:
        first = load(keys, i, 0)
        if first == -1:
            first = claim(keys, i, hi)
            if first == -1:
                if keys.shape[1] == 2:
                    store(keys, i, 1, lo)
                store(vals, i, None, value)
                at = (thread + 1) * PAD
                store(shared, at, None, shared[at] + 1)  # others read it
                return True
        if first == hi and (keys.shape[1] == 1 or _second(keys, i) == lo):
            store(vals, i, None, value)  # another thread's value for it: the same number
            return False
        i = (i + 1) & mask


@jit
def entries(shared, thread):  # noqa: ANN001, ANN202
    """The entries written by ``thread``; by every thread if it is -1."""
    if thread >= 0:
        return shared[(thread + 1) * PAD]
    total = 0
    for at in range(PAD, shared.shape[0], PAD):
        total += load(shared, at, None)
    return total


@jit
def insert(keys, vals, shared, new_keys, new_vals):  # noqa: ANN001, ANN202
    """Entries given as keys and values into a memo, where not there already."""
    for i in range(new_keys.shape[0]):
        if new_keys[i, 0] != -1 and new_vals[i] == new_vals[i]:
            lo = new_keys[i, 1] if new_keys.shape[1] == 2 else 0  # compact keys: one int, lo 0
            put(keys, vals, shared, 0, new_keys[i, 0], lo, new_vals[i])


def empty(capacity: int, threads: int, width: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A memo of ``capacity`` slots (a power of two) for ``threads`` threads, keys of ``width`` ints
    (1: the lean solver's compact keys, 16 bytes a slot with the value)."""
    return (
        np.full((capacity, width), -1, dtype=np.int64),
        np.full(capacity, np.nan),
        np.zeros((threads + 1) * PAD, dtype=np.int64),
    )
