"""Play a game in the terminal: ``quadrat-play Zudecken --seed 7``.

The table is shown as text with the legal moves numbered. Type a move number, ``h`` for a hint
(from the greedy agent and from the planner), ``q`` to quit.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

import gymnasium as gym
import numpy as np

import quadrat_env  # noqa: F401  (registers the games)
from quadrat_env.arguments import at_least
from quadrat_env.extras import command
from quadrat_env.registry import short_names

GAMES = short_names()


def describe(env: gym.Env, action: int) -> str:
    """A move in words, e.g. ``cover slots 0, 2 (7♣ 7♦)`` or ``play Q♠ to centre N``."""
    u = env.unwrapped
    if action == u.end_action:
        return "end the game (no move is possible)"
    return u.game.describe(u.state, action)


def hints(env_id: str, obs: np.ndarray, mask: np.ndarray) -> list[str]:
    from quadrat_env.agents import GreedyAgent
    from quadrat_env.agents.planner import PlannerAgent

    out = []
    for agent in (GreedyAgent(env_id), PlannerAgent(env_id, samples=16, seed=0)):
        action, _ = agent.predict(obs, action_masks=mask)
        out.append(f"{agent.name} suggests {int(action)}")
    return out


def play(env_id: str, seed: int | None, stdin: TextIO, stdout: TextIO) -> int:
    """Run one game; returns 0 when it ended, 1 when the player quit."""
    env = gym.make(env_id, render_mode="ansi")
    obs, info = env.reset(seed=seed)

    def say(text: str = "") -> None:
        print(text, file=stdout, flush=True)

    say(f"{env_id}, deal seed {seed}. Type a move number, h for a hint, q to quit.")
    while True:
        legal = np.flatnonzero(info["action_mask"])
        say("\n" + env.render())
        for a in legal:
            say(f"  {a:>2}: {describe(env, int(a))}")
        stdout.write("move> ")
        stdout.flush()
        line = stdin.readline()
        if not line:  # end of input
            say("\nno more input: quitting")
            return 1
        entry = line.strip().lower()
        if entry in ("q", "quit"):
            say("quit")
            return 1
        if entry in ("h", "hint", "?"):
            say("; ".join(hints(env_id, obs, info["action_mask"])))
            continue
        # compared as text: int() of a 5,000-digit entry raises (Python's digit limit)
        move = entry.lstrip("0") or "0" if entry.isascii() and entry.isdigit() else entry
        if move not in {str(a) for a in legal}:
            shown = entry if len(entry) <= 20 else entry[:20] + "..."
            say(f"{shown!r} is not a legal move: type one of {', '.join(map(str, legal))}, h or q")
            continue
        obs, _, terminated, truncated, info = env.step(int(move))
        if terminated or truncated:
            say("\n" + env.render())
            say(f"\n{'You won!' if info['won'] else 'Game over: lost'} ({info['cards_left']} cards left)")
            return 0


@command
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Play Quadrat, Zudecken or Quadrille in the terminal.")
    games = short_names()  # every registered game, including ones registered after import
    p.add_argument("game", choices=sorted(games), help="which game")
    p.add_argument("--seed", type=at_least(0), default=None, help="deal this seeded game (default: random)")
    args = p.parse_args(argv)
    return play(games[args.game], args.seed, sys.stdin, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
