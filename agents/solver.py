"""Exact solvers with perfect information (the stock order is known): the clairvoyant upper bound.

    solve("quadrat_env/Zudecken-v0", deck) -> [actions of a winning line] or None

The line replays through ``env.reset(options={"deck": deck})`` with the ID's default kwargs.

* Games that search (Quadrat, Zudecken): the game's compiled depth-first search
  (``quadrat_env.core.kernel``), running the same compiled rules as the envs, remembering the
  positions it has proven lost under the game's position key. For the four-slot games the slots
  are interchangeable (any subset can form a group; a refill only decides which slot a card lands
  in), so a position is (stock position, sorted upcards).
* Games whose greedy rule is optimal (``Rules.greedy_is_optimal``; Quadrille): the greedy line.
  For Quadrille that is exact: a card can only ever go on piles of one kind, all four of a kind are
  alike, and taking it off the discard pile never hides a card (it uncovers one). So playing it now
  never removes an option a later play needs. A full search without this rule, tried as a check,
  did not finish in 200,000 states on deals that always-play loses.

Command line: ``python -m quadrat_env.agents.solver Zudecken "AC 2C ..."`` or ``--seed 7``;
``--deals N`` times N seeded deals.
"""

from __future__ import annotations

import argparse
import functools
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from quadrat_env.arguments import at_least
from quadrat_env.cards import parse_deck
from quadrat_env.core.kernel import new_memo
from quadrat_env.core.rules import Rules
from quadrat_env.extras import command
from quadrat_env.registry import rules_for, short_names


def solve(env_id: str, deck: str | Sequence[str | int], **env_kwargs: object) -> list[int] | None:
    """A winning line of actions for ``deck`` in the env ``env_id``, or ``None`` if none exists.

    The solver of an ``(env_id, env_kwargs)`` is built once and kept (a few at most): building one
    compiles nothing but warms its searches up, which cost more than most deals' search. Calls from
    several threads take turns (they share its memo)."""
    with _SOLVE_LOCK:
        try:
            solver = _kept_solver(env_id, tuple(sorted(env_kwargs.items())))
        except TypeError:  # an unhashable kwarg: a solver for this call only
            solver = Solver(rules_for(env_id, **env_kwargs))
        game = solver.game
        return solver.line_from_row(game.start_row(parse_deck(deck, game.pack), checked=True))


_SOLVE_LOCK = threading.Lock()


@functools.lru_cache(maxsize=8)
def _kept_solver(env_id: str, env_kwargs: tuple[tuple[str, object], ...]) -> Solver:
    return Solver(rules_for(env_id, **dict(env_kwargs)))


def solve_state(game: Rules, state: Any) -> list[int] | None:
    """A winning line from any state of ``game``, or ``None``."""
    return Solver(game).line(state)


class Solver:
    """Decides positions of one game variant with the stock order known."""

    def __init__(self, game: Rules) -> None:
        self.game, self.greedy = game, game.greedy_is_optimal
        kernel = game.kernel
        if not self.greedy and kernel.solve_line is None:
            raise ValueError(f"{game.name} has no position key to search with and no optimal greedy rule")
        self.order = np.array(game.search_order, dtype=np.int64)
        self.buffer = np.zeros(game.max_moves + 1, dtype=np.int64)
        self.memo = new_memo()  # reused from deal to deal: a new deal only bumps its generation
        if not self.greedy:  # compile (or load) both searches now, not inside a timed decision: a
            # planner whose first decision ran out of time on compiling drew fewer samples, which
            # shifted its random stream and so every later decision (629 vs 642 of the same 1,000 deals won)
            self.line(game.start(game.pack))
            self.wins_after(np.zeros((0, game.state_size), dtype=np.int64), np.zeros(0, dtype=np.int64))

    def line(self, state: Any) -> list[int] | None:
        """A winning line of moves from a readable state, or ``None``."""
        return self.line_from_row(self.game.to_row(state))

    def line_from_row(self, row: np.ndarray) -> list[int] | None:
        if self.greedy:
            return self._greedy_line(row)
        n = self.game.kernel.solve_line(row, self.game.params, self.order, self.game.max_moves, self.buffer,
                                        self.memo)  # fmt: skip
        return None if n < 0 else self.buffer[:n].tolist()

    def winnable(self, rows: np.ndarray) -> np.ndarray:
        """``winnable[k]``: can the deal in state row ``rows[k]`` be won? (One compiled call for all.)"""
        rows = np.atleast_2d(np.asarray(rows, dtype=np.int64))
        if self.greedy:
            return np.array([self._greedy_line(row) is not None for row in rows], dtype=np.bool_)
        out = np.zeros(len(rows), dtype=np.int64)
        self.game.kernel.solve_rows(rows, self.game.params, self.order, self.game.max_moves, self.memo, out)
        return out >= 0

    def wins_after(self, rows: np.ndarray, moves: np.ndarray) -> np.ndarray:
        """``wins[k, i]``: does the legal move ``moves[i]`` still win the deal ``rows[k]`` (state rows;
        one row is taken as a batch of one)?"""
        rows, moves = np.atleast_2d(rows), np.asarray(moves, dtype=np.int64)
        if len(moves) and (moves.min() < 0 or moves.max() >= self.game.num_moves):
            # the compiled search does not check: a move it has no table row for reads past the end
            raise ValueError(f"wins_after: moves must be the game's moves 0..{self.game.num_moves - 1} "
                             f"(not the 'end' action), got {moves.tolist()}")  # fmt: skip
        wins = np.zeros((len(rows), len(moves)), dtype=np.bool_)
        self.game.kernel.wins_after(rows, moves, self.game.params, self.order,
                                    self.game.max_moves, wins, self.memo)  # fmt: skip
        return wins

    def win_shares(self, observation: np.ndarray, moves: np.ndarray, rng: np.random.Generator,
                   samples: int) -> np.ndarray:  # fmt: skip
        """Per legal move, the share of ``samples`` random orders of the unseen cards in which it still
        wins: what a player who sees ``observation`` can know of it (the true stock is not read)."""
        return self.wins_after(self.game.determinize_many(observation, rng, samples), moves).mean(axis=0)

    def _greedy_line(self, row: np.ndarray) -> list[int] | None:
        game, row = self.game, row.copy()
        kernel, scratch = game.kernel, np.zeros(game.layout.size, dtype=np.float32)
        mask, line = np.zeros(game.num_moves + 1, dtype=np.int8), []
        while True:
            mask[:] = 0
            if not kernel.legal(row, mask, game.params):
                return line if kernel.won(row, game.params) else None
            move = game.greedy(mask)
            line.append(move)
            kernel.play(row, move, scratch, game.params)


@command
def main(argv: list[str] | None = None) -> int:

    import quadrat_env  # noqa: F401  (registers the games)

    names = short_names()
    p = argparse.ArgumentParser(description="Solve a deal with the stock order known.")
    p.add_argument("game", help=f"one of {sorted(names)} or a full env ID")
    p.add_argument("deck", nargs="?", help="card codes, first dealt first, e.g. 'AC 2C ...'")
    p.add_argument("--seed", type=at_least(0), help="solve the deal reset(seed=SEED) deals instead")
    p.add_argument("--deals", type=at_least(1), help="time the solver on this many seeded deals")
    args = p.parse_args(argv)
    env_id = names.get(args.game, args.game)
    if env_id not in names.values():
        p.error(f"unknown game {args.game!r}; choose from {sorted(names)}")
    if sum(x is not None for x in (args.deck, args.seed, args.deals)) != 1:
        p.error("give exactly one of: a deck, --seed, --deals")
    env = gym.make(env_id).unwrapped
    solver = Solver(env.game)
    if args.deals is not None:
        time_deals(env, solver, args.deals)
        return 0
    if args.deck is not None and not args.deck.strip():
        p.error("the deck is empty: give card codes like 'AC 2C ...', or --seed")
    try:
        deck = parse_deck(args.deck) if args.deck else None
        env.reset(seed=args.seed, options={"deck": deck} if deck else None)
    except ValueError as err:
        p.error(str(err))
    line = solver.line(env.state)
    print(f"deck: {' '.join(env.deck)}")
    if line is None:
        print("not winnable")
        return 1
    print(f"winnable in {len(line)} actions: {' '.join(map(str, line))}")
    return 0


def deal_rows(env: Any, seeds: Iterable[int]) -> np.ndarray:
    """The state rows of the deals ``env.reset(seed=s)`` for each seed (``env``: an unwrapped env)."""
    rows = []
    for seed in seeds:
        env.reset(seed=seed)
        rows.append(env.game.to_row(env.state))
    return np.array(rows)


def time_deals(env: Any, solver: Solver, deals: int) -> tuple[np.ndarray, int, float]:
    """Decide the deals ``reset(seed=0..deals-1)``; the time to deal them (the env's seeding) is
    reported apart from the time to decide them. Their state rows, the wins and the seconds."""
    from tqdm.auto import tqdm

    start = time.perf_counter()
    rows = deal_rows(env, tqdm(range(deals), unit="deal", desc="dealing", disable=None))
    dealing = time.perf_counter() - start
    solver.winnable(rows[:1])  # warm-up: numba compiles (or loads its cache) on first use
    decided = time.perf_counter()
    wins = int(solver.winnable(rows).sum())  # one compiled call: the search, not Python, is timed
    secs = time.perf_counter() - decided
    print(f"{env.spec.id}: {wins}/{deals} deals winnable ({wins / deals:.2%}), decided in {secs:.3f}s "
          f"({1e6 * secs / deals:.1f} µs/deal); dealing them took {dealing:.2f}s more")  # fmt: skip
    return rows, wins, secs


if __name__ == "__main__":
    sys.exit(main())
