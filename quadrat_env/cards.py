"""Cards as small integers, and their text codes.

A card is written rank + suit: ranks ``A23456789TJQK``, suits ``C D H S`` ("TD" is the ten of
diamonds). Internally a card is the integer ``suit * 13 + rank`` with rank 0 = Ace ... 12 = King and
suit 0 = clubs ... 3 = spades, so ``card // 13`` is its suit and ``card % 13`` its rank.

A deck is a sequence of cards; index 0 is the first card dealt (the top of the stock or hand).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

RANKS = "A23456789TJQK"
SUITS = "CDHS"
SUIT_SYMBOLS = "♣♦♥♠"
RED_SUITS = frozenset({1, 2})  # diamonds, hearts

ACE, FIVE, SIX, JACK, QUEEN, KING = 0, 4, 5, 10, 11, 12

#: All 52 cards in the order C A..K, D A..K, H A..K, S A..K.
FULL_PACK: tuple[int, ...] = tuple(range(52))
#: The fewest and the most ranks a suit of a pack may have.
MIN_RANKS, MAX_RANKS = 4, 13


def ranks_pack(ranks: int) -> tuple[int, ...]:
    """The pack of the ``ranks`` highest ranks of each suit, Ace high, in the order A, then the
    others from the lowest up, suit by suit: 8 ranks are the Skat pack, 13 the full pack."""
    if isinstance(ranks, bool) or not isinstance(ranks, int) or not MIN_RANKS <= ranks <= MAX_RANKS:
        raise ValueError(f"ranks must be a whole number in {MIN_RANKS}..{MAX_RANKS}, got {ranks!r}")
    return tuple(s * 13 + r for s in range(4) for r in (ACE, *range(14 - ranks, KING + 1)))


#: The 32-card Skat pack: 7 8 9 T J Q K A of each suit.
SKAT_PACK: tuple[int, ...] = ranks_pack(8)
#: Every pack by its size: four suits of 4 to 13 ranks (16, 20, ..., 52 cards).
PACKS: dict[int, tuple[int, ...]] = {4 * r: ranks_pack(r) for r in range(MIN_RANKS, MAX_RANKS + 1)}


def suit(card: int) -> int:
    return card // 13


def rank(card: int) -> int:
    return card % 13


def parse_card(code: str) -> int:
    """Parse a code such as ``"TD"`` (case-insensitive; ``"10D"`` is accepted for the ten)."""
    if not isinstance(code, str):
        raise ValueError(f"card code must be a string like 'TD', got {code!r}")
    text = code.strip().upper()
    if text.startswith("10"):
        text = "T" + text[2:]
    if len(text) != 2 or text[0] not in RANKS or text[1] not in SUITS:
        raise ValueError(
            f"unknown card code {code!r}: expected a rank from {RANKS!r} followed by a suit "
            f"from {SUITS!r}, e.g. 'TD'"
        )
    return SUITS.index(text[1]) * 13 + RANKS.index(text[0])


def card_code(card: int) -> str:
    """The two-letter code of a card, e.g. ``card_code(22) == "TD"``."""
    if not 0 <= card < 52:
        raise ValueError(f"card number must be in 0..51, got {card!r}")
    return RANKS[card % 13] + SUITS[card // 13]


_CARD_OF_CODE: dict[str, int] = {card_code(c): c for c in range(52)}


def card_symbol(card: int) -> str:
    """Rank plus suit symbol, e.g. ``"T♦"``, for text pictures."""
    return RANKS[card % 13] + SUIT_SYMBOLS[card // 13]


def parse_deck(
    deck: str | Iterable[str | int], pack_size: int | Sequence[int] | None = None
) -> tuple[int, ...]:
    """Turn card codes (a list, or one string separated by spaces/commas) into card numbers.

    Integers 0..51 are taken as card numbers. With ``pack_size`` (a size of ``PACKS``) the deck must be a
    permutation of that pack; the error says which cards are wrong, duplicated or missing.
    """
    items: Sequence[str | int]
    if isinstance(deck, np.ma.MaskedArray):  # masked cards are no cards: refuse, do not guess
        if np.ma.getmaskarray(deck).any():
            raise ValueError("deck must be card codes or numbers, got a masked array with masked entries")
        deck = np.ma.getdata(deck)
    if isinstance(deck, np.ndarray) and deck.ndim != 1:  # a 0-d array has no length: refuse it here
        raise ValueError(f"deck must be a list of card codes like ['TD', 'AS', ...] in dealing order, "
                         f"got {deck.ndim}-d: an array of shape {deck.shape} is not one row")  # fmt: skip
    _check_length(deck, pack_size)
    if isinstance(deck, str):
        items = deck.replace(",", " ").split()
    elif (
        isinstance(deck, np.ndarray)
        or isinstance(deck, Sequence)
        and not isinstance(deck, (bytes, bytearray))
    ):
        items = list(deck)
    else:
        kind = type(deck).__name__
        why = {
            "set": "a set has no order",
            "frozenset": "a set has no order",
            "dict": "a dict is not a deck",
        }.get(kind, kind)
        raise ValueError(f"deck must be a list of card codes like ['TD', 'AS', ...] in dealing order, "
                         f"got {why}")  # fmt: skip
    try:  # the usual spelling ("TD" ...): one lookup a card; anything else is read item by item
        cards = [_CARD_OF_CODE[item] for item in items]
    except (KeyError, TypeError):
        cards = _read_items(items)
    if pack_size is not None:
        check_pack(cards, pack_size)
    return tuple(cards)


def _read_items(items: Sequence[str | int]) -> list[int]:
    """Card numbers of codes in any accepted spelling and of integers, or the first bad item's error."""
    cards: list[int] = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            try:
                cards.append(parse_card(item))
            except ValueError as err:
                raise ValueError(f"deck position {i}: {err}") from None
        elif hasattr(item, "__index__") and not isinstance(item, bool):  # int, numpy int
            if not 0 <= int(item) < 52:
                raise ValueError(f"deck position {i}: card number {item!r} is not in 0..51")
            cards.append(int(item))
        else:
            raise ValueError(f"deck position {i}: expected a card code like 'TD', got {item!r}")
    return cards


def _check_length(deck: Any, pack_size: int | Sequence[int] | None) -> None:
    """Refuse a deck far longer than the pack before reading it item by item (a 10^7-item deck
    would otherwise be parsed for seconds before its length is refused)."""
    if pack_size is None:
        return
    size = pack_size if isinstance(pack_size, int) else len(pack_size)
    if isinstance(deck, str):  # a code is 2-3 characters; 16 a card leaves room for any layout
        if len(deck) > 16 * size:
            raise ValueError(f"deck has more than {size} cards; this game needs {size}")
    elif hasattr(deck, "__len__") and len(deck) > size:
        raise ValueError(f"deck has {len(deck)} cards; this game needs {size}")


def check_pack(cards: Sequence[int], pack_size: int | Sequence[int]) -> None:
    """Raise ``ValueError`` unless ``cards`` is exactly the pack, once each: the 32- or 52-card pack
    by its size, or a game's own pack given as its cards."""
    if not isinstance(pack_size, int):
        pack_cards = tuple(pack_size)
        pack_size = len(pack_cards)
    elif pack_size in PACKS:
        pack_cards = PACKS[pack_size]
    else:
        raise ValueError(f"pack size must be one of {sorted(PACKS)}, got {pack_size!r}")
    if len(cards) != pack_size:
        raise ValueError(f"deck has {len(cards)} cards; this game needs {pack_size}")
    if sorted(cards) == sorted(pack_cards):  # the usual case; otherwise say what is wrong
        return
    dupes = sorted(c for c, n in Counter(cards).items() if n > 1)
    if dupes:
        raise ValueError(f"deck repeats {format_cards(dupes)}")
    pack = set(pack_cards)
    foreign = [c for c in cards if c not in pack]
    if foreign:
        raise ValueError(
            f"deck holds {format_cards(foreign)}, not in the {pack_size}-card pack"
            + (" (the Skat pack has 7 8 9 T J Q K A only)" if pack_cards == SKAT_PACK else "")
        )


def format_cards(cards: Iterable[int]) -> str:
    return " ".join(card_code(c) for c in cards)
