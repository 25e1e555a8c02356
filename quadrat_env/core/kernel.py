"""Every runtime path of a game, built from its rules written once as compiled row functions.

A game supplies five functions over one state row ``s`` (int64), observation row ``o`` (float32),
mask row ``m`` (int8) and its variant settings ``p`` (int64), each compiled with
``jit``:

==========================  ============================================================
``deal(s, deck, o, p)``     start the deal ``deck`` in ``s``; write its whole observation
``legal(s, m, p) -> bool``  set ``m[a] = 1`` for each legal move (``m`` arrives zeroed);
                            whether there is one
``play(s, a, o, p)``        play the legal move ``a``; bring ``o`` up to date
``cards_left(s, p) -> int`` cards not yet laid off / covered / on the piles
``won(s, p) -> bool``       whether a finished game (no legal move) is won
``key(s, p) -> int``        optional: an int64 naming the position for the solver's memo
                            (equal keys must mean equally winnable positions)
``advance(s, a, p)``        optional: ``play`` without the observation, for the solver's
                            search (which never reads one); ``play`` should call it
==========================  ============================================================

A game whose state row ends in entries that never change after ``deal`` (the four-slot games'
deck) passes ``mutable=`` the length of the row's changing prefix: the search then copies only
that prefix from one depth to the next.

``build`` turns them into the compiled loops that the single env, the batched env, the
solver and the planner call; so the rules exist once, and every path runs the same code.
"""

from __future__ import annotations

import hashlib
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from quadrat_env.core.jit import fingerprint, jit

#: An episode's bookkeeping row (int64), one per env, kept by ``Kernel.act`` and
#: ``Kernel.start``: steps since the deal, whether the episode has ended (terminated) or was cut
#: by the time limit (truncated), whether the last step won, was illegal, and the cards left.
EP_ELAPSED, EP_TERMINATED, EP_TRUNCATED, EP_WON, EP_ILLEGAL, EP_CARDS = range(6)
EP_SIZE = 6
#: The env settings the per-row step reads (an int64 row): what an illegal action does, the "end"
#: action (-1: none), the time limit (0: none), dense rewards (0/1), and the pack's size.
CFG_ILLEGAL, CFG_END, CFG_LIMIT, CFG_DENSE, CFG_PACK = range(5)
CFG_SIZE = 5
#: Values of ``cfg[CFG_ILLEGAL]``, in the order of the env's ``ILLEGAL_MODES``.
PENALIZE, END, RAISE = 0, 1, 2


@dataclass(frozen=True)
class Kernel:
    """The compiled paths of one game (see the module docstring for the row functions)."""

    deal: Callable[..., Any]
    legal: Callable[..., Any]
    play: Callable[..., Any]
    cards_left: Callable[..., Any]
    won: Callable[..., Any]
    #: ``reset_one(s, deck, o, m, p) -> bool``: deal; write the mask; whether a move exists.
    reset_one: Callable[..., Any]
    #: ``start(s, deck, o, m, p, ep, cfg) -> bool``: deal, write the mask (only "end" if no move),
    #: zero the bookkeeping row ``ep``; False if there is no move and no "end" action.
    start: Callable[..., Any]
    #: ``start_rows(rows, decks, S, O, M, p, EP, cfg) -> bool``: ``start`` per row.
    start_rows: Callable[..., Any]
    #: ``act(s, a, o, m, p, ep, cfg, penalty) -> reward``: one env step of action ``a`` (any
    #: action in range): the legal check, an illegal action's penalty, "end", the play, the reward,
    #: the step count and time limit; ``ep`` gets the outcome. In "raise" mode an illegal action
    #: only sets ``ep[EP_ILLEGAL]`` and changes nothing else (the caller raises).
    act: Callable[..., Any]
    #: ``act_rows(live, acts, S, O, M, p, EP, cfg, penalty, rewards) -> row or -1``: ``act``
    #: for every live row. In "raise" mode it first looks for an illegal action: if one is found, it
    #: returns its row and steps nothing.
    act_rows: Callable[..., Any]
    #: ``solve_line(s, p, order, max_moves, line, memo) -> length or -1``: a winning line (or -1);
    #: ``memo`` comes from ``new_memo`` and may be reused from deal to deal.
    solve_line: Callable[..., Any] | None = None
    #: ``wins_after(S, moves, p, order, max_moves, wins, memo)``: ``wins[k, i]``, does move
    #: ``moves[i]`` still win the deal ``S[k]``? (One memo generation per deal, shared by its moves.)
    wins_after: Callable[..., Any] | None = None
    #: ``solve_rows(S, p, order, max_moves, memo, out)``: ``out[k]``, the length of a winning line
    #: of the deal ``S[k]``, or -1: many deals decided in one compiled call.
    solve_rows: Callable[..., Any] | None = None


def build(
    deal: Callable[..., Any],
    legal: Callable[..., Any],
    play: Callable[..., Any],
    cards_left: Callable[..., Any],
    won: Callable[..., Any],
    key: Callable[..., Any] | None = None,
    obs_size: int = 1,
    advance: Callable[..., Any] | None = None,
    mutable: int = 0,
) -> Kernel:
    """The compiled paths of a game from its row functions (already compiled with ``jit``).

    The loops below are written once, here; each game gets its own compiled copy, in which its row
    functions are compiled in. (Closures would do the same, but numba cannot cache a closure
    across processes; a copy with the game's functions as globals and a name of its own can be.)
    """
    if isinstance(mutable, bool) or not isinstance(mutable, int) or mutable < 0:
        raise ValueError(f"mutable must be an int >= 0 (0: the whole row), got {mutable!r}")
    names = {"deal": deal, "legal": legal, "play": play, "cards_left": cards_left, "won": won,
             "key": key, "OBS_SIZE": obs_size, "MUTABLE": mutable}  # fmt: skip
    tag = _tag(names)
    reset_one = _specialize(_reset_one, names, tag)
    more = {**names, "reset_one": reset_one}
    start = _specialize(_start, more, tag)
    act = _specialize(_act, more, tag)
    start_rows = _specialize(_start_rows, {**more, "start": start}, tag)
    act_rows = _specialize(_act_rows, {**more, "act": act}, tag)
    solve_line = wins_after = solve_rows = None
    if key is not None:
        more["advance"] = advance if advance is not None else _specialize(_advance_by_play, more, tag)
        search = {"search": _specialize(_search, more, tag), "stack": _specialize(_stack, more, tag)}
        solve_line = _specialize(_solve_line, {**more, **search}, tag)
        wins_after = _specialize(_wins_after, {**more, **search}, tag)
        solve_rows = _specialize(_solve_rows, {**more, **search}, tag)
    return Kernel(deal, legal, play, cards_left, won, reset_one, start, start_rows, act, act_rows,
                  solve_line, wins_after, solve_rows)  # fmt: skip


def _tag(names: dict[str, Any]) -> str:
    """A name for a game's compiled copies that changes whenever its rules' code or tables do
    (``fingerprint``, which needs no source file)."""
    h = hashlib.sha256()
    for name, fn in sorted(names.items()):
        h.update(name.encode())
        h.update((fingerprint(fn.py_func) if hasattr(fn, "py_func") else repr(fn)).encode())
    return h.hexdigest()[:16]


def _specialize(template: Callable[..., Any], names: dict[str, Any], tag: str) -> Callable[..., Any]:
    fn = types.FunctionType(template.__code__, {**template.__globals__, **names}, template.__name__)
    fn.__qualname__ = f"{template.__name__.lstrip('_')}_{tag}"  # the cache file's name
    return jit(fn)


# -- the loops, written once (compiled per game by _specialize, which supplies the game's
# deal/legal/play/cards_left/won/key as globals) --------------------------------------------------
def _reset_one(s, deck, o, m, p):  # noqa: ANN001, ANN202
    deal(s, deck, o, p)  # noqa: F821
    m[:] = 0
    return legal(s, m, p)  # noqa: F821


# -- the env step of one row, shared by the single and the batched env ------------------------------
def _start(s, deck, o, m, p, ep, cfg):  # noqa: ANN001, ANN202
    any_move = reset_one(s, deck, o, m, p)  # noqa: F821
    ep[:] = 0
    ep[EP_CARDS] = cards_left(s, p)  # noqa: F821
    if not any_move:  # a deal that opens with no move offers only "end"
        if cfg[CFG_END] < 0:
            return False
        m[cfg[CFG_END]] = 1
    return True


def _start_rows(rows, decks, S, O, M, p, EP, cfg):  # noqa: ANN001, ANN202, N803, E741
    ok = True
    for j in range(rows.shape[0]):
        e = rows[j]
        ok &= start(S[e], decks[j], O[e], M[e], p, EP[e], cfg)  # noqa: F821
    return ok


def _act(s, a, o, m, p, ep, cfg, penalty):  # noqa: ANN001, ANN202
    if m[a] == 0:
        ep[EP_ILLEGAL] = 1
        if cfg[CFG_ILLEGAL] == RAISE:
            return 0.0
        reward = -penalty
        ep[EP_WON] = 0
        if cfg[CFG_ILLEGAL] == END:
            ep[EP_TERMINATED] = 1
            m[:] = 0
    elif a == cfg[CFG_END]:
        reward = 0.0
        ep[EP_ILLEGAL] = 0
        ep[EP_WON] = 0
        ep[EP_TERMINATED] = 1
        m[:] = 0
    else:  # the cards left before the move are in ep already
        play(s, a, o, p)  # noqa: F821
        m[:] = 0
        over = not legal(s, m, p)  # noqa: F821
        after = cards_left(s, p)  # noqa: F821
        won_now = over and won(s, p)  # noqa: F821
        reward = 0.0
        if cfg[CFG_DENSE]:
            reward += (ep[EP_CARDS] - after) / cfg[CFG_PACK]
        if won_now:
            reward += 1.0
        ep[EP_ILLEGAL] = 0
        ep[EP_TERMINATED] = over
        ep[EP_WON] = won_now
        ep[EP_CARDS] = after
    ep[EP_ELAPSED] += 1
    ep[EP_TRUNCATED] = cfg[CFG_LIMIT] > 0 and ep[EP_ELAPSED] >= cfg[CFG_LIMIT]
    return reward


def _act_rows(live, acts, S, O, M, p, EP, cfg, penalty, rewards):  # noqa: ANN001, ANN202, N803, E741
    if cfg[CFG_ILLEGAL] == RAISE:
        for e in range(live.shape[0]):
            if live[e] and M[e, acts[e]] == 0:
                return e
    for e in range(live.shape[0]):
        if live[e]:
            rewards[e] = act(S[e], acts[e], O[e], M[e], p, EP[e], cfg, penalty)  # noqa: F821
    return -1


_ENTER, _NEXT, _RETURN = 0, 1, 2
#: Entries of the solver's memo of lost positions (a power of two), and how full it may get: it is
#: a cache, so once full, further lost positions are simply not remembered (the search stays exact).
MEMO_SIZE = 1 << 13
MEMO_FILL = MEMO_SIZE * 3 // 4


def new_memo() -> np.ndarray:
    """A memo for ``Kernel.solve_line`` / ``Kernel.wins_after``: rows [key, generation];
    the last row holds the current generation, so starting a new deal is one increment, not a clear."""
    return np.zeros((MEMO_SIZE + 1, 2), dtype=np.int64)


@jit
def _slot(k, mask):  # noqa: ANN001, ANN202
    h = k ^ (k >> 15) ^ (k >> 31)
    return (h * 0x5BD1E995) & mask  # int64 multiplication wraps; the low bits are mixed enough


@jit
def memo_new_deal(memo):  # noqa: ANN001, ANN201
    memo[MEMO_SIZE, 0] += 1
    memo[MEMO_SIZE, 1] = 0  # entries filled in this generation


@jit
def memo_has(memo, k):  # noqa: ANN001, ANN201
    gen, mask = memo[MEMO_SIZE, 0], MEMO_SIZE - 1
    i = _slot(k, mask)
    while memo[i, 1] == gen:
        if memo[i, 0] == k:
            return True
        i = (i + 1) & mask
    return False


@jit
def memo_add(memo, k):  # noqa: ANN001, ANN201
    gen, mask = memo[MEMO_SIZE, 0], MEMO_SIZE - 1
    if memo[MEMO_SIZE, 1] >= MEMO_FILL:
        return
    i = _slot(k, mask)
    while memo[i, 1] == gen:
        if memo[i, 0] == k:
            return
        i = (i + 1) & mask
    memo[i, 0], memo[i, 1] = k, gen
    memo[MEMO_SIZE, 1] += 1


def _advance_by_play(s, a, p):  # noqa: ANN001, ANN202
    play(s, a, np.zeros(OBS_SIZE, dtype=np.float32), p)  # noqa: F821  (a game without ``advance``)


def _search(s0, p, order, max_moves, memo, line, states, masks, tried, keys):  # noqa: ANN001, ANN202
    """Depth-first search with the stock known: a winning line from ``s0`` into ``line``, its
    length, or -1 if the deal is lost. Moves are tried in ``order``; ``memo`` remembers positions
    proven lost (by their ``key``) and may be shared by calls on one deal. ``states`` .. ``keys``
    are the search's stack, allocated once by the caller."""
    n = order.shape[0]
    # Rows up to depth ``top`` hold s0's unchanging tail already, so a move copies only the
    # MUTABLE prefix (0: the whole row) of its parent row.
    width = min(MUTABLE, s0.shape[0]) if MUTABLE > 0 else s0.shape[0]  # noqa: F821
    states[0] = s0
    d, top, status, result = 0, 0, _ENTER, False
    while True:
        if status == _ENTER:
            k = key(states[d], p)  # noqa: F821
            keys[d] = k
            if memo_has(memo, k):
                result, status = False, _RETURN
            else:
                masks[d] = 0
                if legal(states[d], masks[d], p):  # noqa: F821
                    tried[d], status = 0, _NEXT
                else:
                    result, status = won(states[d], p), _RETURN  # noqa: F821
        elif status == _NEXT:
            while tried[d] < n and masks[d, order[tried[d]]] == 0:
                tried[d] += 1
            if tried[d] == n:  # every move loses: remember the position
                memo_add(memo, keys[d])
                result, status = False, _RETURN
            else:
                move = order[tried[d]]
                tried[d] += 1
                line[d] = move
                if d + 1 > top:
                    states[d + 1] = states[d]
                    top = d + 1
                else:
                    for i in range(width):
                        states[d + 1, i] = states[d, i]
                advance(states[d + 1], move, p)  # noqa: F821
                d += 1
                status = _ENTER
        else:
            if result:
                return d  # line[:d] wins
            if d == 0:
                return -1
            d -= 1
            status = _NEXT


def _stack(width, n, max_moves):  # noqa: ANN001, ANN202
    """The search's stack: states, masks, moves tried and keys per depth."""
    return (np.empty((max_moves + 1, width), dtype=np.int64), np.zeros((max_moves + 1, n + 1), dtype=np.int8),
            np.zeros(max_moves + 1, dtype=np.int64), np.zeros(max_moves + 1, dtype=np.int64))  # fmt: skip


def _solve_line(s0, p, order, max_moves, line, memo):  # noqa: ANN001, ANN202
    states, masks, tried, keys = stack(s0.shape[0], order.shape[0], max_moves)  # noqa: F821
    memo_new_deal(memo)
    return search(s0, p, order, max_moves, memo, line, states, masks, tried, keys)  # noqa: F821


def _solve_rows(S0, p, order, max_moves, memo, out):  # noqa: ANN001, ANN202, N803
    line = np.zeros(max_moves + 1, dtype=np.int64)
    states, masks, tried, keys = stack(S0.shape[1], order.shape[0], max_moves)  # noqa: F821
    for k in range(S0.shape[0]):
        memo_new_deal(memo)
        out[k] = search(S0[k], p, order, max_moves, memo, line, states, masks, tried, keys)  # noqa: F821


def _wins_after(S0, moves, p, order, max_moves, wins, memo):  # noqa: ANN001, ANN202, N803
    line = np.zeros(max_moves + 1, dtype=np.int64)
    states, masks, tried, keys = stack(S0.shape[1], order.shape[0], max_moves)  # noqa: F821
    s = np.empty(S0.shape[1], dtype=np.int64)
    for k in range(S0.shape[0]):
        memo_new_deal(memo)  # one memo per deal, shared by its moves
        for i in range(moves.shape[0]):
            s[:] = S0[k]
            advance(s, moves[i], p)  # noqa: F821
            found = search(s, p, order, max_moves, memo, line, states, masks, tried, keys)  # noqa: F821
            wins[k, i] = found >= 0
