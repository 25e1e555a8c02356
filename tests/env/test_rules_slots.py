"""Quadrat and Zudecken rules on hand-built decks. Tables are drawn slot 0 first."""

from __future__ import annotations

import pytest
from conftest import deck_starting, play_out

from quadrat_env import IllegalMove
from quadrat_env.cards import SKAT_PACK, format_cards, parse_card, parse_deck
from quadrat_env.slots.reference import EMPTY, SlotState, quadrat, zudecken

Q32, Q52, ZU = quadrat(32), quadrat(52), zudecken()


def shown(state: SlotState) -> str:
    return " ".join("--" if c == EMPTY else format_cards([c]) for c in state.slots)


# -- Quadrat -----------------------------------------------------------------------------------
def test_refill_goes_lower_slot_first():
    # 7C 8D      lay off (0,3) = 7C 9C; the stock then deals JH, then QS
    # KS 9C      slot 0 gets JH, slot 3 gets QS
    state = Q32.start(deck_starting("7C 8D KS 9C JH QS", 32))
    assert Q32.legal_moves(state) == (2,)
    after = Q32.play(state, 2)
    assert shown(after) == "JH 8D KS QS"
    assert after.stock_size == 26


def test_three_of_a_suit_only_two_go():
    # 7C 8C / 9C 7D: three clubs show; any two of them is a move, the third stays
    state = Q32.start(deck_starting("7C 8C 9C 7D JH QS", 32))
    assert Q32.legal_moves(state) == (0, 1, 3)  # (0,1) (0,2) (1,2)
    assert shown(Q32.play(state, 1)) == "JH 8C QS 7D"


def test_four_of_a_suit_offer_all_six_pairs():
    state = Q32.start(deck_starting("7C 8C 9C TC", 32))
    assert Q32.legal_moves(state) == (0, 1, 2, 3, 4, 5)


def test_quadrat_won_deal_clears_the_table():
    # The Skat pack sorted by suit: clubs 7..A, then diamonds... every refill brings a pair.
    end = play_out(Q32, SKAT_PACK)
    assert Q32.is_won(end) and Q32.cards_left(end) == 0 and shown(end) == "-- -- -- --"


def test_quadrat_lost_deal():
    # 7C 8C / 7D 7H: lay off the clubs, the stock deals 7S 9C -> 7S 9C / 7D 7H: no pair, lost
    state = Q32.start(deck_starting("7C 8C 7D 7H 7S 9C", 32))
    end = Q32.play(state, 0)
    assert Q32.is_over(end) and not Q32.is_won(end)
    assert Q32.cards_left(end) == 30


def test_quadrat_dead_start_has_no_move():
    state = Q32.start(deck_starting("7C 7D 7H 7S", 32))
    assert Q32.legal_moves(state) == () and Q32.is_over(state) and not Q32.is_won(state)


def test_quadrat52_is_won_with_four_cards_left():
    # AC 2C / KC KD, then the stock deals same-suit pairs into slots 0 and 1, and KH KS last:
    # the stock is used up with KH KS / KC KD showing -- one of each suit, the table cannot clear.
    pairs = " ".join(f"{a}{s} {b}{s}" for s in "CDHS" for a, b in zip("A3579J", "2468TQ", strict=True))
    deck = parse_deck("AC 2C KC KD " + pairs.replace("AC 2C ", "") + " KH KS", 52)
    end = play_out(Q52, deck)
    assert Q52.is_won(end) and Q52.cards_left(end) == 4
    assert shown(end) == "KH KS KC KD"


def test_illegal_move_is_refused_and_named():
    state = Q32.start(deck_starting("7C 8D KS 9C", 32))
    with pytest.raises(IllegalMove, match=r"move 0 is not legal with 7C 8D KS 9C showing"):
        Q32.play(state, 0)
    with pytest.raises(IllegalMove):
        Q32.play(state, 6)  # Quadrat has moves 0-5 only


# -- Zudecken ----------------------------------------------------------------------------------
def test_zudecken_group_of_three():
    # 7C 7D 8D 2H: 7C~7D by rank, 7D~8D by suit, so (0,1,2) may go; 2H matches none of them
    state = ZU.start(deck_starting("7C 7D 8D 2H"))
    assert ZU.legal_moves(state) == (0, 3, 6)  # (0,1) (1,2) (0,1,2)
    after = ZU.play(state, 6)
    assert shown(after) == "AC 2C 3C 2H"  # refilled from the stock in slot order
    assert after.stock_size == 45


def test_zudecken_group_of_four_including_two_disjoint_pairs():
    # 7C 7D 2H 2S: every card matches another of the four (7C~7D, 2H~2S), so all four may go
    state = ZU.start(deck_starting("7C 7D 2H 2S"))
    assert ZU.legal_moves(state) == (0, 5, 10)
    # 7C 8C 8D 2H: all pairs that match, the triple (0,1,2), and no group with 2H
    state = ZU.start(deck_starting("7C 8C 8D 2H"))
    assert ZU.legal_moves(state) == (0, 3, 6)


def test_zudecken_cover_with_exhausted_stock():
    # Rank by rank: AC AD AH AS, 2C 2D 2H 2S, ... every move covers four of a rank. After twelve
    # moves the stock is used up and KC KD KH KS show; covering them lays them off: cleared.
    deck = parse_deck(" ".join(f"{r}{s}" for r in "A23456789TJQK" for s in "CDHS"), 52)
    state = ZU.start(deck)
    for _ in range(12):
        state = ZU.play(state, 10)
    assert state.stock_size == 0 and shown(state) == "KC KD KH KS"
    end = ZU.play(state, 10)
    assert shown(end) == "-- -- -- --" and ZU.is_over(end) and ZU.is_won(end)


def test_zudecken_stock_runs_out_within_a_group():
    # One stock card left (JS) and three upcards covered: slot 0 gets JS, slots 1 and 2 empty
    deck = deck_starting("", 52)[::-1]  # any deck; the state is built by hand below
    last = deck.index(parse_card("JS"))
    deck = deck[:last] + deck[last + 1 :] + (parse_card("JS"),)
    state = SlotState(deck, 51, tuple(parse_deck("7C 7D 8D 2H")))
    after = ZU.play(state, 6)
    assert shown(after) == "JS -- -- 2H" and after.stock_size == 0
    assert ZU.cards_left(after) == 2


def test_zudecken_win_rules_cleared_and_dealt():
    # Stock used up with KC left alone: lost under win="cleared", won under win="dealt"
    deck = deck_starting("", 52)
    state = SlotState(deck, 52, (parse_card("KC"), EMPTY, EMPTY, EMPTY))
    assert ZU.is_over(state) and not ZU.is_won(state)
    assert zudecken(win="dealt").is_won(state)
    assert ZU.cards_left(state) == 1


def test_zudecken_lost_deal_dead_start():
    state = ZU.start(deck_starting("AC 2D 3H 4S"))
    assert ZU.is_over(state) and not ZU.is_won(state) and ZU.cards_left(state) == 52


def test_zudecken_pairs_only_variant():
    state = zudecken(cover="pairs").start(deck_starting("7C 7D 7H 7S"))
    assert zudecken(cover="pairs").legal_moves(state) == (0, 1, 2, 3, 4, 5)
    with pytest.raises(IllegalMove):
        zudecken(cover="pairs").play(state, 10)


@pytest.mark.parametrize("kwargs", [{"win": "all"}, {"cover": "triples"}])
def test_zudecken_bad_variant(kwargs):
    with pytest.raises(ValueError, match="must be"):
        zudecken(**kwargs)


def test_starting_from_a_bad_deck_fails():
    with pytest.raises(ValueError, match="needs 32"):
        Q32.start(deck_starting(""))
