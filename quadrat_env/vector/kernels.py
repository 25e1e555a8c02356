"""Compiled loops for the batched envs (Quadrat, Zudecken, Quadrille), used when numba is installed.

The numpy code in :mod:`quadrat_env.vector.slots` and :mod:`quadrat_env.vector.quadrille` spends
most of a step in the fixed cost of tens of array operations; one compiled pass per env does the
same work without them (2-4x the env-steps/s at 1,024 envs; the README's speed table). The loops
compute exactly what the numpy code does, in the same float64 arithmetic cast to float32, and the
equivalence tests run both against the single envs.

``pip install "quadrat-env[fast]"`` installs numba; without it ``backend="auto"`` uses numpy.
Compiled code is cached beside this file (numba's ``cache=True``), so only the first use compiles.
"""

from __future__ import annotations

from quadrat_env.envs import quadrille as _q

try:
    import numba
except ImportError:  # the numpy backend serves instead
    numba = None

AVAILABLE = numba is not None


def _jit(fn):  # noqa: ANN001, ANN202 - a decorator that is a no-op without numba
    return numba.njit(cache=True, nogil=True)(fn) if AVAILABLE else fn


@_jit
def _legal_row(slots, e, match, mask_table, masks):  # noqa: ANN001, ANN202
    """Write env ``e``'s legal-move mask (the single rules' 6-bit pair pattern lookup); any legal?"""
    a, b, c, d = slots[e, 0] % 53, slots[e, 1] % 53, slots[e, 2] % 53, slots[e, 3] % 53  # EMPTY -> 52
    pattern = (match[a, b] | match[a, c] << 1 | match[a, d] << 2 | match[b, c] << 3
               | match[b, d] << 4 | match[c, d] << 5)  # fmt: skip
    any_legal = False
    for k in range(masks.shape[1]):
        masks[e, k] = mask_table[pattern, k]
        any_legal |= mask_table[pattern, k] != 0
    return any_legal


@_jit
def _write_counts(e, nxt, slots, counts, obs, pack, stock_col, rank_features):  # noqa: ANN001, ANN202
    """The stock size and per-slot unseen match counts, the last columns of the observation."""
    obs[e, stock_col] = (pack - nxt[e]) / (pack - 4)
    suit_div = pack // 4 - 1
    for s in range(4):
        c = slots[e, s]
        obs[e, stock_col + 1 + s] = 0.0 if c < 0 else counts[e, c // 13] / suit_div
        if rank_features:
            obs[e, stock_col + 5 + s] = 0.0 if c < 0 else counts[e, 4 + c % 13] / 3


@_jit
def slot_play(active, actions, decks, nxt, slots, counts, obs, masks, cover, index,  # noqa: ANN001, ANN201
              match, mask_table, pack, rank_features):  # fmt: skip
    """Play ``actions[e]`` in every env with ``active[e]``: refill covered slots in ascending order,
    update the observation where it changed and the masks; returns "no legal move left" per env."""
    n = active.shape[0]
    unseen_col, stock_col = 4 * pack, 5 * pack
    over = active.copy()
    for e in range(n):
        if not active[e]:
            continue
        a = actions[e]
        pos = nxt[e]
        for s in range(4):
            if not cover[a, s]:
                continue
            obs[e, s * pack + index[slots[e, s]]] = 0.0
            if pos < pack:
                c = decks[e, pos]
                obs[e, s * pack + index[c]] = 1.0
                obs[e, unseen_col + index[c]] = 0.0
                counts[e, c // 13] -= 1.0
                counts[e, 4 + c % 13] -= 1.0
                slots[e, s] = c
            else:
                slots[e, s] = -1
            pos += 1
        nxt[e] = min(pos, pack)
        _write_counts(e, nxt, slots, counts, obs, pack, stock_col, rank_features)
        over[e] = not _legal_row(slots, e, match, mask_table, masks)
    return over


@_jit
def slot_deal(rows, decks, nxt, slots, counts, obs, index, pack, rank_features):  # noqa: ANN001, ANN201
    """Start the deals ``decks[rows]``: their full observations and unseen counts."""
    unseen_col, stock_col = 4 * pack, 5 * pack
    for e in rows:
        obs[e, :] = 0.0
        counts[e, :] = 0.0
        nxt[e] = 4
        for s in range(4):
            c = decks[e, s]
            slots[e, s] = c
            obs[e, s * pack + index[c]] = 1.0
        for k in range(4, pack):
            c = decks[e, k]
            obs[e, unseen_col + index[c]] = 1.0
            counts[e, c // 13] += 1.0
            counts[e, 4 + c % 13] += 1.0
        _write_counts(e, nxt, slots, counts, obs, pack, stock_col, rank_features)


# -- Quadrille ----------------------------------------------------------------------------------
# The single env's observation columns, as plain ints (numba compiles module ints in as constants).
_IN_HAND, _IN_DISCARD, _ON_PILES = _q.IN_HAND.start, _q.IN_DISCARD.start, _q.ON_PILES.start
_HAND_ORDER, _DISCARD_ORDER, _DISCARD_TOP = _q.HAND_ORDER.start, _q.DISCARD_ORDER.start, _q.DISCARD_TOP.start
_PILE_SUIT, _PILE_FILL = _q.PILE_SUIT.start, _q.PILE_FILL.start
_HAND_SIZE, _DISCARD_SIZE = _q.HAND_SIZE, _q.DISCARD_SIZE
_REDEALS_LEFT, _HAND_KNOWN = _q.REDEALS_LEFT, _q.HAND_KNOWN


@_jit
def _quadrille_encode(e, seq, pos, hlen, stack, dcount, piles, redeals_left, obs, fill, redeals):  # noqa: ANN001, ANN202
    """Env ``e``'s whole observation (a deal moves every card's order column, so all of it changes)."""
    obs[e, :] = 0.0
    for c in range(52):
        obs[e, _ON_PILES + c] = 1.0
    known = redeals_left[e] < redeals
    for i in range(pos[e], hlen[e]):
        c = seq[e, i]
        obs[e, _IN_HAND + c] = 1.0
        obs[e, _ON_PILES + c] = 0.0
        if known:
            obs[e, _HAND_ORDER + c] = (i - pos[e] + 1) / 52
    d = dcount[e]
    for i in range(d):
        c = stack[e, i]
        obs[e, _IN_DISCARD + c] = 1.0
        obs[e, _ON_PILES + c] = 0.0
        obs[e, _DISCARD_ORDER + c] = (d - i) / 52
    if d > 0:
        obs[e, _DISCARD_TOP + stack[e, d - 1]] = 1.0
    for p in range(12):
        top = piles[e, p]
        if top >= 0:
            obs[e, _PILE_SUIT + 4 * p + top // 13] = 1.0
            obs[e, _PILE_FILL + p] = fill[p, top]
    obs[e, _HAND_SIZE] = (hlen[e] - pos[e]) / 52
    obs[e, _DISCARD_SIZE] = d / 52
    obs[e, _REDEALS_LEFT] = redeals_left[e] / redeals if redeals > 0 else 0.0
    obs[e, _HAND_KNOWN] = 1.0 if known else 0.0


@_jit
def _quadrille_legal(e, pos, hlen, stack, dcount, piles, redeals_left, masks, accepts):  # noqa: ANN001, ANN202
    """Env ``e``'s legal moves: deal (or redeal), and the discard top to each pile it fits."""
    d = dcount[e]
    can_deal = pos[e] < hlen[e] or (redeals_left[e] > 0 and d > 0)
    masks[e, 0] = 1 if can_deal else 0
    any_legal = can_deal
    for p in range(12):
        top = piles[e, p]
        fits = d > 0 and accepts[p, top if top >= 0 else 52, stack[e, max(d - 1, 0)]]
        masks[e, 1 + p] = 1 if fits else 0
        any_legal |= fits
    return any_legal


@_jit
def quadrille_play(active, actions, seq, pos, hlen, stack, dcount, piles, redeals_left, obs,  # noqa: ANN001, ANN201
                   masks, accepts, fill, redeals):  # fmt: skip
    """Play ``actions[e]`` (legal) in every env with ``active[e]``; re-encode those observations and
    write their masks; returns "no legal move left" per env."""
    over = active.copy()
    for e in range(active.shape[0]):
        if not active[e]:
            continue
        a = actions[e]
        if a == 0 and pos[e] < hlen[e]:  # turn a card onto the discard pile
            stack[e, dcount[e]] = seq[e, pos[e]]
            pos[e] += 1
            dcount[e] += 1
        elif a == 0:  # redeal: the discard pile, first dealt on top, is the new hand
            for i in range(dcount[e]):
                seq[e, i] = stack[e, i]
            hlen[e] = dcount[e]
            pos[e] = 0
            dcount[e] = 0
            redeals_left[e] -= 1
        else:
            piles[e, a - 1] = stack[e, dcount[e] - 1]
            dcount[e] -= 1
        _quadrille_encode(e, seq, pos, hlen, stack, dcount, piles, redeals_left, obs, fill, redeals)
        over[e] = not _quadrille_legal(e, pos, hlen, stack, dcount, piles, redeals_left, masks, accepts)
    return over


@_jit
def quadrille_deal(rows, decks, seq, pos, hlen, stack, dcount, piles, redeals_left, obs, fill,  # noqa: ANN001, ANN201
                   redeals):  # fmt: skip
    """Start the deals ``decks[rows]``: the whole deck is the hand; their full observations."""
    for e in rows:
        for i in range(52):
            seq[e, i] = decks[e, i]
        pos[e], hlen[e], dcount[e], redeals_left[e] = 0, 52, 0, redeals
        for p in range(12):
            piles[e, p] = -1
        _quadrille_encode(e, seq, pos, hlen, stack, dcount, piles, redeals_left, obs, fill, redeals)
