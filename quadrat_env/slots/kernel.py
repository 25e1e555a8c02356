"""The compiled rules of the four-slot games (Quadrat, Quadrat52, Zudecken): one state row each.

The readable version of the same rules is ``quadrat_env.slots.reference``; the tests
play both side by side and require the same states, moves and observations.
"""

from __future__ import annotations

import numpy as np

from quadrat_env.cards import PACKS, SUITS
from quadrat_env.core.jit import jit
from quadrat_env.core.kernel import build

#: Move number -> the slots it takes away (pairs 0-5, triples 6-9, all four 10).
GROUPS: tuple[tuple[int, ...], ...] = (
    (0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3),
    (0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3),
    (0, 1, 2, 3),
)  # fmt: skip
NUM_SLOTS = 4
NUM_PAIRS = 6
EMPTY = -1
#: The match table's row for an empty slot, which matches nothing.
NO_CARD = 52
PAIR_SLOTS = GROUPS[:NUM_PAIRS]
#: How many moves of GROUPS a largest group size allows: pairs 6, triples 10, all four 11.
MOVES_UP_TO = {2: 6, 3: 10, 4: 11}
#: Unseen cards are counted per suit (entries 0-3) and per rank (4-16).
NUM_COUNTS = len(SUITS) + 13

# -- the state row -------------------------------------------------------------------------------
NEXT = 0  # index in the deck of the next stock card
SLOTS = 1  # four upcards, EMPTY where a slot is empty
COUNTS = SLOTS + NUM_SLOTS  # unseen cards per suit and per rank
DECK = COUNTS + NUM_COUNTS  # the deck, index 0 dealt first


def state_size(pack_size: int) -> int:
    return DECK + pack_size


# -- the variant settings (params) -----------------------------------------------------------------
(P_PACK, P_MATCH_RANK, P_MOVES, P_CLEAR, P_RANK_COUNTS, P_UNSEEN, P_STOCK, P_SUIT_MATCH, P_RANK_MATCH) = (
    range(9)
)

# -- tables, frozen into the compiled code ---------------------------------------------------------
#: MATCH[match_rank, a, b]: cards a and b match (same suit, or with match_rank also same rank).
MATCH = np.array([[[a < NO_CARD and b < NO_CARD and (a // 13 == b // 13 or (r and a % 13 == b % 13))
                    for b in range(NO_CARD + 1)] for a in range(NO_CARD + 1)] for r in (0, 1)],
                 dtype=np.int64)  # fmt: skip
#: COVER[move, slot]: the move takes the slot away.
COVER = np.array([[s in g for s in range(NUM_SLOTS)] for g in GROUPS], dtype=np.bool_)
#: INDEX[pack // 4, card]: the card's place in its pack of ``pack // 4`` ranks a suit (the
#: observation's one-hot position); -1 for a card outside that pack.
INDEX = np.full((14, 52), -1, dtype=np.int64)
for _pack, _cards in PACKS.items():
    INDEX[_pack // 4, list(_cards)] = np.arange(_pack)


def _legal_table() -> np.ndarray:
    """LEGAL[moves, pattern, move]: with the slot pairs matching as the 6 bits of ``pattern`` say,
    is ``move`` (one of the first ``moves`` groups) legal? A group is legal when every slot in it
    matches another slot of the group."""
    table = np.zeros((len(GROUPS) + 1, 64, len(GROUPS)), dtype=np.int8)
    for pattern in range(64):
        adj = [0] * NUM_SLOTS  # adj[i]: bitmask of the slots matching slot i
        for bit, (i, j) in enumerate(PAIR_SLOTS):
            if pattern >> bit & 1:
                adj[i] |= 1 << j
                adj[j] |= 1 << i
        for move, group in enumerate(GROUPS):
            bits = sum(1 << i for i in group)
            if all(adj[i] & bits for i in group):
                table[move + 1 :, pattern, move] = 1
    return table


LEGAL = _legal_table()


# -- the rules ---------------------------------------------------------------------------------------
@jit
def _write_counts(s, o, p):  # noqa: ANN001, ANN202
    """The stock size and the per-slot unseen match counts: the observation's last entries."""
    pack = p[P_PACK]
    o[p[P_STOCK]] = (pack - s[NEXT]) / (pack - NUM_SLOTS)
    per_suit = pack // 4 - 1
    for i in range(NUM_SLOTS):
        c = s[SLOTS + i]
        o[p[P_SUIT_MATCH] + i] = 0.0 if c < 0 else s[COUNTS + c // 13] / per_suit
        if p[P_RANK_COUNTS]:
            o[p[P_RANK_MATCH] + i] = 0.0 if c < 0 else s[COUNTS + 4 + c % 13] / 3


@jit
def deal(s, deck, o, p):  # noqa: ANN001, ANN201
    pack = p[P_PACK]
    index = INDEX[pack // 4]
    o[:] = 0.0
    s[:] = 0
    s[NEXT] = NUM_SLOTS
    for k in range(pack):
        s[DECK + k] = deck[k]
    for i in range(NUM_SLOTS):
        s[SLOTS + i] = deck[i]
        o[i * pack + index[deck[i]]] = 1.0
    for k in range(NUM_SLOTS, pack):
        c = deck[k]
        o[p[P_UNSEEN] + index[c]] = 1.0
        s[COUNTS + c // 13] += 1
        s[COUNTS + 4 + c % 13] += 1
    _write_counts(s, o, p)


@jit
def _row(card):  # noqa: ANN001, ANN202
    """A slot's row in the match table: the card, or NO_CARD for an empty slot."""
    return NO_CARD if card == EMPTY else card


@jit
def legal(s, m, p):  # noqa: ANN001, ANN201
    # Which of the six slot pairs match decides every group: one table lookup by that pattern.
    match = MATCH[p[P_MATCH_RANK]]
    a, b = _row(s[SLOTS]), _row(s[SLOTS + 1])
    c, d = _row(s[SLOTS + 2]), _row(s[SLOTS + 3])
    pattern = (match[a, b] | match[a, c] << 1 | match[a, d] << 2 | match[b, c] << 3
               | match[b, d] << 4 | match[c, d] << 5)  # fmt: skip
    row = LEGAL[p[P_MOVES], pattern]
    found = False
    for move in range(p[P_MOVES]):
        if row[move]:
            m[move] = 1
            found = True
    return found


@jit
def advance(s, a, p):  # noqa: ANN001, ANN201
    # Each slot taken away receives the next stock card, slots in ascending order; once the stock
    # is used up the slot stays empty.
    pack, pos = p[P_PACK], s[NEXT]
    for i in range(NUM_SLOTS):
        if not COVER[a, i]:
            continue
        if pos < pack:
            c = s[DECK + pos]
            s[COUNTS + c // 13] -= 1
            s[COUNTS + 4 + c % 13] -= 1
            s[SLOTS + i] = c
        else:
            s[SLOTS + i] = EMPTY
        pos += 1
    s[NEXT] = min(pos, pack)


@jit
def play(s, a, o, p):  # noqa: ANN001, ANN201
    pack = p[P_PACK]
    index = INDEX[pack // 4]
    for i in range(NUM_SLOTS):  # the covered cards leave (a legal group has no empty slot)
        if COVER[a, i]:
            o[i * pack + index[s[SLOTS + i]]] = 0.0
    advance(s, a, p)
    for i in range(NUM_SLOTS):  # their replacements arrive, and are no longer unseen
        c = s[SLOTS + i]
        if COVER[a, i] and c != EMPTY:
            o[i * pack + index[c]] = 1.0
            o[p[P_UNSEEN] + index[c]] = 0.0
    _write_counts(s, o, p)


@jit
def cards_left(s, p):  # noqa: ANN001, ANN201
    left = p[P_PACK] - s[NEXT]
    for i in range(NUM_SLOTS):
        left += s[SLOTS + i] != EMPTY
    return left


@jit
def won(s, p):  # noqa: ANN001, ANN201
    if s[NEXT] < p[P_PACK]:
        return False
    if not p[P_CLEAR]:
        return True
    for i in range(NUM_SLOTS):  # noqa: SIM110 - a plain loop compiles best
        if s[SLOTS + i] != EMPTY:
            return False
    return True


@jit
def key(s, p):  # noqa: ANN001, ANN201
    # The slots are interchangeable (any subset can form a group; a refill only decides where a
    # card lands), so a position is (stock position, sorted upcards). Sorted by a five-comparison
    # network: the search calls this at every node, and an array here would be allocated each time.
    a, b, c, d = s[SLOTS] + 1, s[SLOTS + 1] + 1, s[SLOTS + 2] + 1, s[SLOTS + 3] + 1  # 0 (empty) .. 52
    a, b = min(a, b), max(a, b)
    c, d = min(c, d), max(c, d)
    a, c = min(a, c), max(a, c)
    b, d = min(b, d), max(b, d)
    b, c = min(b, c), max(b, c)
    return (((s[NEXT] * 64 + a) * 64 + b) * 64 + c) * 64 + d


#: The largest observation of the family (Zudecken's), so the solver's scratch fits every variant.
MAX_OBS = 5 * 52 + 9
#: The solver's search copies only the row before the deck, which never changes after the deal.
KERNEL = build(deal, legal, play, cards_left, won, key, obs_size=MAX_OBS, advance=advance, mutable=DECK)
