"""Property tests over random decks and random legal moves.

The checks keep their own books (which cards went where) and their own reading of the rules, so
they do not just repeat what the engine computes.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from quadrat_env import IllegalMove
from quadrat_env.cards import FULL_PACK, SKAT_PACK
from quadrat_env.games.quadrille.reference import EMPTY as NO_CARD
from quadrat_env.games.quadrille.reference import QuadrilleGame
from quadrat_env.slots.reference import EMPTY, GROUPS, quadrat, zudecken

SLOT_GAMES = {"Quadrat": quadrat(32), "Quadrat52": quadrat(52), "Zudecken": zudecken(),
              "ZudeckenPairs": zudecken(cover="pairs")}  # fmt: skip
choices = st.lists(st.integers(0, 10_000), min_size=200, max_size=200)


def oracle_slot_moves(name: str, slots: tuple[int, ...]) -> list[int]:
    """Legal moves read straight off the rule text, independently of the engine."""
    match_rank = name.startswith("Zudecken")
    biggest = 4 if name == "Zudecken" else 2
    moves = []
    for m, group in enumerate(GROUPS[: 11 if match_rank else 6]):
        cards = [slots[i] for i in group]
        if len(group) > biggest or EMPTY in cards:
            continue

        def ok(c, d):  # noqa: E306
            return c // 13 == d // 13 or (match_rank and c % 13 == d % 13)

        if all(any(ok(c, d) for d in cards[:i] + cards[i + 1 :]) for i, c in enumerate(cards)):
            moves.append(m)
    return moves


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(sorted(SLOT_GAMES)), data=st.data(), picks=choices)
def test_slot_games_conserve_cards_and_moves_match_the_rules(name, data, picks):
    game = SLOT_GAMES[name]
    deck = data.draw(st.permutations(SKAT_PACK if game.pack_size == 32 else FULL_PACK))
    state, gone = game.start(deck), []
    for pick in picks:
        moves = game.legal_moves(state)
        assert list(moves) == oracle_slot_moves(name, state.slots)
        showing = [c for c in state.slots if c != EMPTY]
        stock = list(state.deck[state.next :])
        assert sorted(showing + stock + gone) == sorted(deck)  # each card in exactly one place
        assert game.cards_left(state) == len(showing) + len(stock)
        if not moves:
            break
        move = moves[pick % len(moves)]
        gone += [state.slots[i] for i in GROUPS[move]]
        state = game.play(state, move)
    assert game.is_over(state)
    if game.is_won(state):
        assert not stock and (name.startswith("Quadrat") or not showing)


@settings(max_examples=100, deadline=None)
@given(deck=st.permutations(FULL_PACK), picks=choices, redeals=st.integers(0, 3))
def test_quadrille_conserves_cards_and_piles_build_in_sequence(deck, picks, redeals):
    game = QuadrilleGame(redeals=redeals)
    state = game.start(deck)
    piles: list[list[int]] = [[] for _ in range(12)]  # our own record of each pile
    for pick in picks + [0] * 400:
        on_piles = [c for p in piles for c in p]
        assert sorted(list(state.hand) + list(state.discard) + on_piles) == list(FULL_PACK)
        assert [p[-1] if p else NO_CARD for p in piles] == list(state.piles)
        moves = game.legal_moves(state)
        for move in range(13):  # legal_moves and play agree on every action
            try:
                game.play(state, move)
                assert move in moves
            except IllegalMove:
                assert move not in moves
        if not moves:
            break
        move = moves[pick % len(moves)]
        if move:
            piles[move - 1].append(state.discard[-1])
        state = game.play(state, move)
    for p, pile in enumerate(piles):  # every pile holds its sequence, in one suit
        ranks = "".join("A23456789TJQK"[c % 13] for c in pile)
        assert ranks == ("Q", "5432AK", "6789TJ")[(p >= 4) + (p >= 8)][: len(pile)]
        assert len({c // 13 for c in pile}) <= 1
    assert game.is_won(state) == (len([c for p in piles for c in p]) == 52)


@settings(max_examples=40, deadline=None)
@given(env_id=st.sampled_from(["quadrat_env/Quadrat-v0", "quadrat_env/Quadrat52-v0",
                               "quadrat_env/Zudecken-v0", "quadrat_env/Quadrille-v0"]),
       seed=st.integers(0, 2**31), picks=choices)  # fmt: skip
def test_env_mask_matches_rules_and_deck_replays(env_id, seed, picks):
    env = gym.make(env_id).unwrapped
    obs, info = env.reset(seed=seed)
    actions, trace = [], [(obs, info)]
    for pick in picks + [0] * 400:
        legal = env.game.legal_moves(env.state)
        expected = list(legal) or [env.end_action]
        assert np.flatnonzero(info["action_mask"]).tolist() == expected
        actions.append(expected[pick % len(expected)])
        obs, reward, terminated, _, info = env.step(actions[-1])
        trace.append((obs, info))
        if terminated:
            break
    replay = gym.make(env_id).unwrapped
    obs, info = replay.reset(options={"deck": list(env.deck)})
    again = [(obs, info)] + [(o, i) for o, _, _, _, i in map(replay.step, actions)]
    for (o1, i1), (o2, i2) in zip(trace, again, strict=True):
        assert np.array_equal(o1, o2) and np.array_equal(i1["action_mask"], i2["action_mask"])
    assert i2.get("won") == i1.get("won") and i2["cards_left"] == i1["cards_left"]


@settings(max_examples=60, deadline=None)
@given(deck=st.permutations(SKAT_PACK), picks=choices)
def test_quadrat_outcome_does_not_depend_on_the_moves(deck, picks):
    game = quadrat(32)
    first = game.start(deck)
    while moves := game.legal_moves(first):
        first = game.play(first, moves[0])
    state = game.start(deck)
    for pick in picks:
        if not (moves := game.legal_moves(state)):
            break
        state = game.play(state, moves[pick % len(moves)])
    assert game.is_won(state) == game.is_won(first)
