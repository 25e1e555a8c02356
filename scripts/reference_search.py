"""The compiled solver against the same search written plainly in Python, on the same deals.

    python -m scripts.reference_search Zudecken --deals 200    # from the repository root

``ReferenceSearch`` runs over the tests' reference rules (``slots/reference.py``), so it
shares no code with the compiled search: the tests use it as the oracle of the compiled search, and
this command times the two and checks that they decide every deal alike (four-slot games).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
from quadrat_env.agents.solver import Solver, time_deals

import quadrat_env  # noqa: F401  (registers the games)
from quadrat_env.arguments import at_least
from quadrat_env.registry import rules_for, short_names
from quadrat_env.slots.reference import SlotGame
from quadrat_env.slots.rules import SlotRules


class ReferenceSearch:
    """The compiled solver's depth-first search, written plainly in Python over a game's readable
    rules (``game.start``, ``legal_moves``, ``play``): moves in ``order``, lost positions remembered
    under ``key``."""

    def __init__(self, game: Any, order: Sequence[int], key: Any) -> None:
        self.game, self.order, self.key = game, {m: i for i, m in enumerate(order)}, key
        self.lost: set[Any] = set()

    def line(self, state: Any) -> list[int] | None:
        moves: list[int] = []
        return moves[::-1] if self._win(state, moves) else None

    def _win(self, state: Any, line: list[int]) -> bool:
        key = self.key(state)
        if key in self.lost:
            return False
        moves = self.game.legal_moves(state)
        if not moves:
            return self.game.is_won(state)
        for move in sorted(moves, key=self.order.__getitem__):
            if self._win(self.game.play(state, move), line):
                line.append(move)
                return True
        self.lost.add(key)
        return False


def reference_game(game: Any) -> SlotGame:
    """The reference rules of a four-slot game's compiled rules (same settings)."""
    return SlotGame(game.name, game.pack_size, game.match_rank, game.max_group, game.win_needs_clear,
                    game.num_moves)  # fmt: skip


def search_for(game: Any) -> ReferenceSearch:
    """A fresh reference search with the compiled solver's move order and position key."""
    return ReferenceSearch(reference_game(game), game.search_order,
                           lambda s: (s.next, tuple(sorted(s.slots))))  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    # the games of the four-slot engine, which the reference search is written for
    slot_games = {n: i for n, i in short_names().items() if isinstance(rules_for(i), SlotRules)}
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("game", choices=sorted(slot_games), help="a four-slot game")
    p.add_argument("--deals", type=at_least(1), default=200, help="seeded deals to decide (default 200)")
    args = p.parse_args(argv)
    env = gym.make(slot_games[args.game]).unwrapped
    rows, wins, secs = time_deals(env, Solver(env.game), args.deals)
    ref, start, ref_wins = reference_game(env.game), time.perf_counter(), 0
    for row in rows:
        ref_wins += search_for(env.game).line(ref.start(env.game.view(row).deck)) is not None
    ref_secs = time.perf_counter() - start
    print(f"reference search (plain Python): {ref_wins}/{len(rows)} winnable in {ref_secs:.2f}s; "
          f"the compiled solver is {ref_secs / secs:.0f}x faster, and they "
          f"{'agree' if ref_wins == wins else 'DISAGREE'}")  # fmt: skip
    return 0 if ref_wins == wins else 1


if __name__ == "__main__":
    sys.exit(main())
