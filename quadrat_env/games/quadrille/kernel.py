"""The compiled rules of Quadrille: one state row per deal.

The piles' rules are tables built from each pile's build sequence (``PILE_RANKS``). The tests'
oracle, ``quadrat_env.games.quadrille.reference``, states the same rules independently (as
arithmetic on ranks); the tests play both side by side and require the same states, moves and
observations.
"""

from __future__ import annotations

import numpy as np

from quadrat_env.cards import ACE, FIVE, JACK, KING, QUEEN, SIX
from quadrat_env.core.jit import jit
from quadrat_env.core.kernel import build
from quadrat_env.core.layout import Layout

PACK = 52
EMPTY = -1  # a pile's top when it holds no card
NUM_PILES = 12
DEAL = 0  # move 0 deals (or redeals); move 1 + pile puts the discard top on that pile
#: The ranks each pile takes, in order, all in the suit of its first card: the four centre piles
#: one queen each, the four compass piles 5 4 3 2 A K, the four corner piles 6 7 8 9 10 J.
CENTRE_RANKS = (QUEEN,)
COMPASS_RANKS = (FIVE, FIVE - 1, FIVE - 2, FIVE - 3, ACE, KING)
CORNER_RANKS = (SIX, SIX + 1, SIX + 2, SIX + 3, SIX + 4, JACK)
PILE_RANKS = (CENTRE_RANKS,) * 4 + (COMPASS_RANKS,) * 4 + (CORNER_RANKS,) * 4

LAYOUT = Layout(
    ("in_hand", PACK, "1 for each card in the hand (card `c = suit*13 + rank` at offset `c`)"),
    ("in_discard", PACK, "1 for each card in the discard pile"),
    ("on_piles", PACK, "1 for each card on a pile"),
    ("hand_order", PACK, "after a redeal: (place from the top + 1) / 52 for hand cards, else 0"),
    ("discard_order", PACK, "(depth from the top + 1) / 52 for discard cards"),
    ("discard_top", PACK, "one-hot of the discard top"),
    ("pile_suit", 4 * NUM_PILES, "pile `p` (in the order of actions 1-12): suit one-hot at `312 + 4p + s`"),
    ("pile_fill", NUM_PILES, "cards on pile `p` / its capacity (1 centre, 6 others)"),
    ("hand_size", 1, "cards in hand / 52"),
    ("discard_size", 1, "cards in the discard pile / 52"),
    ("redeals_left", 1, "redeals left / `redeals` (0 when `redeals=0`)"),
    ("hand_known", 1, "1 after a redeal: the hand's order is known"),
)
# The pieces' offsets as plain ints: compiled in as constants.
IN_HAND, IN_DISCARD, ON_PILES = LAYOUT["in_hand"].start, LAYOUT["in_discard"].start, LAYOUT["on_piles"].start
HAND_ORDER, DISCARD_ORDER = LAYOUT["hand_order"].start, LAYOUT["discard_order"].start
DISCARD_TOP, PILE_SUIT = LAYOUT["discard_top"].start, LAYOUT["pile_suit"].start
PILE_FILL = LAYOUT["pile_fill"].start
HAND_SIZE, DISCARD_SIZE = LAYOUT["hand_size"].start, LAYOUT["discard_size"].start
REDEALS_LEFT, HAND_KNOWN = LAYOUT["redeals_left"].start, LAYOUT["hand_known"].start

# -- the state row: the hand is seq[pos:hlen], the discard pile stack[:dcount] -------------------
POS, HLEN, DCOUNT, LEFT, PILES = 0, 1, 2, 3, 4
SEQ = PILES + NUM_PILES
STACK = SEQ + PACK
STATE_SIZE = STACK + PACK
P_REDEALS = 0  # the only setting: redeals allowed


def _tables() -> tuple[np.ndarray, np.ndarray]:
    """ACCEPTS[pile, top, card]: ``card`` may go on ``pile`` whose top is ``top`` (52: empty pile);
    FILL[pile, top]: the pile's cards / its capacity (the length of its sequence), 0 if empty."""
    accepts = np.zeros((NUM_PILES, PACK + 1, PACK), dtype=np.bool_)
    fill = np.zeros((NUM_PILES, PACK + 1))
    for pile, ranks in enumerate(PILE_RANKS):
        for suit in range(4):
            accepts[pile, PACK, suit * 13 + ranks[0]] = True  # an empty pile: the first rank, any suit
            for depth, rank in enumerate(ranks, 1):
                top = suit * 13 + rank
                fill[pile, top] = depth / len(ranks)
                if depth < len(ranks):
                    accepts[pile, top, suit * 13 + ranks[depth]] = True
    return accepts, fill


ACCEPTS, FILL = _tables()


@jit
def _encode(s, o, p):  # noqa: ANN001, ANN202
    """The whole observation (a deal moves every card's order entry, so all of it changes)."""
    redeals = p[P_REDEALS]
    o[:] = 0.0
    for c in range(PACK):
        o[ON_PILES + c] = 1.0
    known = s[LEFT] < redeals
    pos, hlen, d = s[POS], s[HLEN], s[DCOUNT]
    for i in range(pos, hlen):
        c = s[SEQ + i]
        o[IN_HAND + c] = 1.0
        o[ON_PILES + c] = 0.0
        if known:
            o[HAND_ORDER + c] = (i - pos + 1) / 52
    for i in range(d):
        c = s[STACK + i]
        o[IN_DISCARD + c] = 1.0
        o[ON_PILES + c] = 0.0
        o[DISCARD_ORDER + c] = (d - i) / 52
    if d > 0:
        o[DISCARD_TOP + s[STACK + d - 1]] = 1.0
    for q in range(NUM_PILES):
        top = s[PILES + q]
        if top >= 0:
            o[PILE_SUIT + 4 * q + top // 13] = 1.0
            o[PILE_FILL + q] = FILL[q, top]
    o[HAND_SIZE] = (hlen - pos) / 52
    o[DISCARD_SIZE] = d / 52
    o[REDEALS_LEFT] = s[LEFT] / redeals if redeals > 0 else 0.0
    o[HAND_KNOWN] = 1.0 if known else 0.0


@jit
def deal(s, deck, o, p):  # noqa: ANN001, ANN201
    s[:] = 0
    for i in range(PACK):
        s[SEQ + i] = deck[i]
    s[HLEN], s[LEFT] = PACK, p[P_REDEALS]
    for q in range(NUM_PILES):
        s[PILES + q] = EMPTY
    _encode(s, o, p)


@jit
def legal(s, m, p):  # noqa: ANN001, ANN201
    d = s[DCOUNT]
    can_deal = s[POS] < s[HLEN] or (s[LEFT] > 0 and d > 0)
    m[DEAL] = 1 if can_deal else 0
    found = can_deal
    if d > 0:
        card = s[STACK + d - 1]
        for q in range(NUM_PILES):
            top = s[PILES + q]
            if ACCEPTS[q, top if top >= 0 else PACK, card]:
                m[1 + q] = 1
                found = True
    return found


@jit
def play(s, a, o, p):  # noqa: ANN001, ANN201
    if a == DEAL and s[POS] < s[HLEN]:  # turn a card onto the discard pile
        s[STACK + s[DCOUNT]] = s[SEQ + s[POS]]
        s[POS] += 1
        s[DCOUNT] += 1
    elif a == DEAL:  # redeal: the discard pile, first dealt on top, is the new hand
        for i in range(s[DCOUNT]):
            s[SEQ + i] = s[STACK + i]
        s[HLEN], s[POS], s[DCOUNT] = s[DCOUNT], 0, 0
        s[LEFT] -= 1
    else:
        s[PILES + a - 1] = s[STACK + s[DCOUNT] - 1]
        s[DCOUNT] -= 1
    _encode(s, o, p)


@jit
def cards_left(s, p):  # noqa: ANN001, ANN201
    return s[HLEN] - s[POS] + s[DCOUNT]


@jit
def won(s, p):  # noqa: ANN001, ANN201
    return s[HLEN] - s[POS] + s[DCOUNT] == 0


# No search: always playing a card that fits is optimal (a card fits one kind of pile only).
KERNEL = build(deal, legal, play, cards_left, won)
