"""Quadrille rules on hand-built decks."""

from __future__ import annotations

import pytest
from conftest import always_play, deck_starting, play_out

from quadrat_env import IllegalMove
from quadrat_env.cards import format_cards, parse_card, parse_deck
from quadrat_env.games.quadrille.reference import DEAL, EMPTY, QuadrilleGame, accepts, pile_size

GAME = QuadrilleGame()
C = parse_card
N_CENTRE, N_COMPASS, NE_CORNER = 0, 4, 8  # pile numbers; move = pile + 1

# Queens, then each suit in an order where every card fits when dealt: 5 4 3 2 A K 6 7 8 9 T J
WINNING = "QC QD QH QS " + " ".join(f"{r}{s}" for s in "CDHS" for r in "5432AK6789TJ")


def test_piles_accept_exactly_their_sequence():
    assert accepts(N_CENTRE, EMPTY, C("QH")) and not accepts(N_CENTRE, C("QH"), C("QS"))
    assert not accepts(N_CENTRE, EMPTY, C("KH"))
    assert accepts(N_COMPASS, EMPTY, C("5S")) and not accepts(N_COMPASS, EMPTY, C("6S"))
    assert accepts(N_COMPASS, C("5S"), C("4S")) and not accepts(N_COMPASS, C("5S"), C("4H"))
    assert accepts(NE_CORNER, EMPTY, C("6D")) and accepts(NE_CORNER, C("6D"), C("7D"))
    assert not accepts(NE_CORNER, C("6D"), C("5D"))


def test_king_goes_on_the_ace_and_then_the_pile_is_full():
    assert accepts(N_COMPASS, C("AS"), C("KS"))
    assert not accepts(N_COMPASS, C("2S"), C("KS"))  # not before the Ace
    assert not accepts(N_COMPASS, C("AS"), C("KH"))  # same suit only
    assert not any(accepts(N_COMPASS, C("KS"), c) for c in range(52))
    assert pile_size(N_COMPASS, C("KS")) == 6


def test_jack_is_the_last_corner_card():
    assert accepts(NE_CORNER, C("TC"), C("JC"))
    assert not any(accepts(NE_CORNER, C("JC"), c) for c in range(52))  # no queen on the jack
    assert pile_size(NE_CORNER, C("JC")) == 6


def test_deal_and_play_the_discard_top():
    state = GAME.start(deck_starting("QS 5H"))
    assert GAME.legal_moves(state) == (DEAL,)
    state = GAME.play(state, DEAL)
    assert format_cards(state.discard) == "QS" and len(state.hand) == 51
    assert GAME.legal_moves(state) == (0, 1, 2, 3, 4)  # deal, or the queen to any centre pile
    state = GAME.play(state, 3)  # centre S
    assert state.piles[2] == C("QS") and state.discard == ()


def test_redeal_turns_the_discard_over_keeping_its_order():
    state = GAME.start(deck_starting("2C 3C 4C"))
    for _ in range(3):
        state = GAME.play(state, DEAL)
    # Discard (bottom->top) 2C 3C 4C: nothing fits. Deal out the rest, never playing.
    while state.hand:
        state = GAME.play(state, DEAL)
    assert format_cards(state.discard[:3]) == "2C 3C 4C"
    state = GAME.play(state, DEAL)  # the redeal
    assert state.redeals_left == 1 and state.discard == ()
    assert format_cards(state.hand[:3]) == "2C 3C 4C"  # the first card dealt is on top again
    assert GAME.unseen(state) == frozenset()  # the player has seen every card by now


def test_won_deal():
    end = play_out(GAME, parse_deck(WINNING, 52), always_play)
    assert GAME.is_won(end) and GAME.cards_left(end) == 0 and end.redeals_left == 2
    assert [format_cards([c])[0] for c in end.piles] == ["Q"] * 4 + ["K"] * 4 + ["J"] * 4


def test_lost_deal_and_the_redeals_kwarg():
    # 4C first, KS on it, then the winning order without them. Pass one: 5C plays, but 4C lies
    # under KS, so 3C 2C AC KC pile up on the discard:  4C KS 3C 2C AC KC (top) -- nothing fits.
    rest = WINNING.replace("4C ", "").replace("KS ", "")
    deck = parse_deck("4C KS " + rest, 52)
    end = play_out(QuadrilleGame(redeals=0), deck, always_play)
    assert not QuadrilleGame(redeals=0).is_won(end)
    assert format_cards(end.discard) == "4C KS 3C 2C AC KC" and end.hand == ()
    # One redeal deals 4C first: it plays on 5C, KS on AS, then the clubs run down to KC.
    assert QuadrilleGame(redeals=1).is_won(play_out(QuadrilleGame(redeals=1), deck, always_play))


def test_lost_deal_with_default_redeals():
    # A shuffled deal that always-play loses. After three passes the discard pile is
    #   JC AC TD KC JD (top)      JD needs TD on the diamond corner, but TD lies beneath it.
    deck = parse_deck(
        "5D AS 6H JC 2S QC AC 7D 2D QS 4D 9C KH 6S 8H 7S QD 4H TD KC 9D 5S 5H 3H JS KS 8C TS 6D "
        "TH 2C JH 4S 3D 8S AH 2H 6C 3C AD 7H 9S QH JD 7C 9H 5C 4C 3S KD TC 8D",
        52,
    )
    end = play_out(GAME, deck, always_play)
    assert GAME.is_over(end) and not GAME.is_won(end)
    assert end.hand == () and end.redeals_left == 0
    assert format_cards(end.discard) == "JC AC TD KC JD" and GAME.cards_left(end) == 5


def test_illegal_moves_are_refused():
    state = GAME.start(deck_starting("2C"))
    with pytest.raises(IllegalMove, match="not legal with nothing on the discard pile"):
        GAME.play(state, 1)
    state = GAME.play(state, DEAL)
    with pytest.raises(IllegalMove, match="2C on the discard pile"):
        GAME.play(state, 5)


@pytest.mark.parametrize("redeals", [-1, 1.5, True, "2"])
def test_bad_redeals(redeals):
    with pytest.raises(ValueError, match="redeals"):
        QuadrilleGame(redeals=redeals)


def test_compiled_pile_tables_agree_with_the_reference_rule_for_every_pile_top_and_card():
    # The kernel builds its tables from each pile's sequence of ranks; the reference states the
    # rule as arithmetic on ranks. They must agree for every card on every top a pile can have.
    from quadrat_env.games.quadrille.kernel import ACCEPTS, FILL, PACK, PILE_RANKS

    checked = 0
    for pile in range(12):
        for top in range(PACK + 1):
            t = EMPTY if top == PACK else top
            if t != EMPTY and t % 13 not in PILE_RANKS[pile]:
                assert not ACCEPTS[pile, top].any()  # a top the pile never has takes nothing
                continue
            for card in range(PACK):
                assert ACCEPTS[pile, top, card] == accepts(pile, t, card), (pile, top, card)
                checked += 1
            assert FILL[pile, top] == pile_size(pile, t) / len(PILE_RANKS[pile]), (pile, top)
    assert checked == 52 * (4 * 5 + 8 * 25)  # each pile: empty + 4 suits x its ranks
