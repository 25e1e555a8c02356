"""The exact solver's memo: positions' values in a hash table with open addressing, keyed by the
canonical key's two ints (``keys[i] == (-1, -1)``: empty; ``vals[-1]``: the entries so far)."""

from __future__ import annotations

from quadrat_env.core.jit import jit


@jit
def slot(keys, hi, lo):  # noqa: ANN001, ANN202
    """The memo slot holding (hi, lo), or the empty slot where it would go (open addressing)."""
    mask = keys.shape[0] - 1
    h = (hi * 0x9E3779B97F4A7C15 + lo * 0x2B2AE3D27D4EB4F) & 0x7FFFFFFFFFFFFFFF
    i = (h ^ (h >> 29)) & mask
    while keys[i, 0] != -1 and (keys[i, 0] != hi or keys[i, 1] != lo):
        i = (i + 1) & mask
    return i


@jit
def rehash(keys, vals, new_keys, new_vals):  # noqa: ANN001, ANN202
    """Every entry of a memo into a larger, empty one."""
    for i in range(keys.shape[0]):
        if keys[i, 0] != -1:
            j = slot(new_keys, keys[i, 0], keys[i, 1])
            new_keys[j, 0], new_keys[j, 1], new_vals[j] = keys[i, 0], keys[i, 1], vals[i]
    new_vals[-1] = vals[-1]


@jit
def insert(keys, vals, new_keys, new_vals):  # noqa: ANN001, ANN202
    """Entries given as keys and values into a memo, where not there already."""
    for i in range(new_keys.shape[0]):
        j = slot(keys, new_keys[i, 0], new_keys[i, 1])
        if keys[j, 0] == -1:
            keys[j, 0], keys[j, 1], vals[j] = new_keys[i, 0], new_keys[i, 1], new_vals[i]
            vals[-1] += 1
