from __future__ import annotations

from collections.abc import Callable

from quadrat_env.cards import PACKS, parse_deck


def deck_starting(codes: str, pack_size: int = 52) -> tuple[int, ...]:
    """A full deck that deals ``codes`` first, then the rest of the pack in pack order."""
    head = parse_deck(codes)
    return head + tuple(c for c in PACKS[pack_size] if c not in head)


def play_out(game, deck, pick: Callable[[tuple[int, ...]], int] = lambda m: m[0]):
    """Play ``deck`` to the end, choosing with ``pick`` among the legal moves."""
    return play_from(game, game.start(deck), pick)


def play_from(game, state, pick: Callable[[tuple[int, ...]], int] = lambda m: m[0]):
    """Play on from ``state`` to the end, choosing with ``pick`` among the legal moves."""
    while moves := game.legal_moves(state):
        state = game.play(state, pick(moves))
    return state


def always_play(moves: tuple[int, ...]) -> int:
    """Quadrille: put the discard top on a pile when it fits (highest number), else deal."""
    return moves[-1]


def pytest_addoption(parser):
    parser.addoption("--regen-images", action="store_true", help="rewrite tests/data/*.png")
