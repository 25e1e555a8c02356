from __future__ import annotations

import numpy as np
import pytest

from quadrat_env.cards import (
    FULL_PACK,
    SKAT_PACK,
    card_code,
    card_symbol,
    check_pack,
    parse_card,
    parse_deck,
)


def test_codes_round_trip_for_every_card():
    assert [parse_card(card_code(c)) for c in FULL_PACK] == list(FULL_PACK)
    assert card_code(parse_card("TD")) == "TD"
    assert parse_card("td") == parse_card("10D") == 1 * 13 + 9
    assert card_symbol(parse_card("QS")) == "Q♠"


def test_skat_pack_holds_seven_to_ace():
    assert len(SKAT_PACK) == 32
    assert sorted({card_code(c)[0] for c in SKAT_PACK}) == sorted("789TJQKA")


@pytest.mark.parametrize("code", ["1D", "TX", "T", "", "TDD", "ZZ"])
def test_bad_codes_are_named(code):
    with pytest.raises(ValueError, match="unknown card code"):
        parse_card(code)


def test_parse_deck_accepts_strings_lists_and_numbers():
    assert parse_deck("AC 2C, 3C") == (0, 1, 2)
    assert parse_deck(["AC", np.int64(1), 2]) == (0, 1, 2)


@pytest.mark.parametrize(
    ("deck", "size", "message"),
    [
        (list(FULL_PACK[:51]), 52, "51 cards; this game needs 52"),
        (list(FULL_PACK[:51]) + [0], 52, "repeats AC"),
        (list(SKAT_PACK[:31]) + [parse_card("2C")], 32, "2C, not in the 32-card pack"),
        (["AC", "XX"], None, "position 1"),
        ([0, 52], None, "not in 0..51"),
        ([0, 1.0], None, "position 1"),
        ([True], None, "position 0"),
        (["AC", ["AD"]], None, "position 1"),
    ],
)
def test_bad_decks_say_what_is_wrong(deck, size, message):
    with pytest.raises(ValueError, match=message):
        parse_deck(deck, size)


def test_every_spelling_of_a_deck_reads_the_same():
    # the common spelling takes a lookup a card, the others the checking reader: the same cards
    deck = list(np.random.default_rng(0).permutation(FULL_PACK))
    codes = [card_code(c) for c in deck]
    mixed = [c.lower() if i % 3 == 0 else c.replace("T", "10") if i % 3 == 1 else deck[i]
             for i, c in enumerate(codes)]  # fmt: skip
    expected = tuple(int(c) for c in deck)
    assert parse_deck(codes, 52) == parse_deck(" ".join(codes), 52) == parse_deck(mixed, 52) == expected
    assert parse_deck(np.array(deck), 52) == expected


def test_check_pack_rejects_unknown_pack_size():
    with pytest.raises(ValueError, match=r"one of \[16, 20, .*52\], got 42"):
        check_pack(list(range(42)), 42)


def test_packs_of_every_rank_count_hold_the_highest_ranks_ace_first():
    from quadrat_env.cards import FULL_PACK, PACKS, SKAT_PACK, card_code, ranks_pack

    assert ranks_pack(13) == FULL_PACK and PACKS[52] == FULL_PACK and PACKS[32] == SKAT_PACK
    assert ranks_pack(8) == SKAT_PACK and len(set(SKAT_PACK)) == 32
    assert [card_code(c) for c in ranks_pack(4)[:4]] == ["AC", "JC", "QC", "KC"]
    assert sorted(PACKS) == list(range(16, 53, 4))
    for size, pack in PACKS.items():
        assert len(pack) == len(set(pack)) == size and {c // 13 for c in pack} == {0, 1, 2, 3}
    for bad in (3, 14, 8.0, True, "8"):
        with pytest.raises(ValueError, match="ranks must be a whole number in 4..13"):
            ranks_pack(bad)
