"""How much faster the Zudecken solver is than an earlier commit's, measured in one run.

    python -m scripts.solver_then_now                  # against 20c39d5, 1,000 deals
    python -m scripts.solver_then_now --commit HEAD~5 --deals 2000 --rounds 3
    python -m scripts.solver_then_now --per-call       # solve(env_id, deck), a deal a call

The earlier code is checked out into a temporary git worktree (so this needs the repository's
history) and timed in its own process; the current code in another. Both decide the same deals,
``reset(seed=0..deals-1)``, dealt before the clock starts, best of 5 passes each, and the two
alternate for ``--rounds`` rounds so that a busy moment hits both. 20c39d5 holds the earlier solver:
a memoised depth-first search in Python over the readable rules.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ENV_ID = "quadrat_env/Zudecken-v0"

# The earlier solver's API: agents.solver.solve_state(game, state) on the env's readable state.
_THEN = """
import sys, time, gymnasium as gym, quadrat_env
from agents.solver import solve_state
env = gym.make("{env_id}").unwrapped
states = []
for seed in range({deals}):
    env.reset(seed=seed)
    states.append(env.state)
best = float("inf")
for _ in range(5):
    start = time.perf_counter()
    wins = sum(solve_state(env.game, s) is not None for s in states)
    best = min(best, time.perf_counter() - start)
print(wins, best)
"""

# The current one: Solver.winnable over the deals' state rows, one compiled call (warmed up first).
_NOW = """
import time, numpy as np, gymnasium as gym, quadrat_env
from quadrat_env.agents.solver import Solver, deal_rows
env = gym.make("{env_id}").unwrapped
rows = deal_rows(env, range({deals}))
solver = Solver(env.game)
solver.winnable(rows[:1])
best = float("inf")
for _ in range(5):
    start = time.perf_counter()
    wins = int(solver.winnable(rows).sum())
    best = min(best, time.perf_counter() - start)
print(wins, best)
"""

# --per-call: the public ``solve(env_id, deck)`` a deal at a time, on decks given as card-code strings
# (the same call in both; each deal drawn by ``random.Random(seed)``), the first call made untimed.
_CALL = """
import random, time
from quadrat_env.cards import RANKS, SUITS
from {module} import solve
codes = [r + s for s in SUITS for r in RANKS]
decks = []
for seed in range({deals}):
    deck = codes[:]
    random.Random(seed).shuffle(deck)
    decks.append(" ".join(deck))
solve("{env_id}", decks[0])
best = float("inf")
for _ in range(5):
    start = time.perf_counter()
    wins = sum(solve("{env_id}", deck) is not None for deck in decks)
    best = min(best, time.perf_counter() - start)
print(wins, best)
"""


def _code(when: str, per_call: bool, deals: int) -> str:
    """The timing snippet for the earlier code (``when == "then"``) or the current one."""
    if per_call:
        module = "agents.solver" if when == "then" else "quadrat_env.agents.solver"
        return _CALL.format(module=module, env_id=ENV_ID, deals=deals)
    return (_THEN if when == "then" else _NOW).format(env_id=ENV_ID, deals=deals)


def _time(code: str, tree: Path | None) -> tuple[int, float]:
    """Run a timing snippet, importing from the worktree ``tree`` (None: the installed package):
    (winnable deals, seconds)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    out = subprocess.run([sys.executable, "-c", code], cwd=tree or Path.cwd(), env=env, capture_output=True,
                         text=True, check=True).stdout.split()  # fmt: skip
    return int(out[0]), float(out[1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--commit", default="20c39d5", help="the earlier code (default: the Python search)")
    p.add_argument("--deals", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument(
        "--per-call",
        action="store_true",
        help="time the public solve(env_id, deck) a deal at a time (default: a batch of states)",
    )
    args = p.parse_args(argv)
    if args.deals < 1 or args.rounds < 1:
        p.error("--deals and --rounds must be >= 1")
    repo = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        then_dir = Path(tmp) / "then"
        add = ["git", "-C", str(repo), "worktree", "add", "--detach", str(then_dir), args.commit]
        made = subprocess.run(add, capture_output=True, text=True)
        if made.returncode != 0:
            p.error(f"cannot check out {args.commit!r}: {made.stderr.strip().splitlines()[-1]}")
        try:
            ratios = []
            for r in range(args.rounds):
                try:
                    then = _time(_code("then", args.per_call, args.deals), then_dir)
                except subprocess.CalledProcessError as err:  # e.g. a commit without the old solver API
                    last = (err.stderr.strip().splitlines() or ["no output"])[-1]
                    p.error(f"cannot time {args.commit!r}'s solver (agents.solver): {last}")
                now = _time(_code("now", args.per_call, args.deals), None)
                if then[0] != now[0]:
                    print(f"they disagree: {then[0]} against {now[0]} winnable deals", file=sys.stderr)
                    return 1
                ratios.append(then[1] / now[1])
                print(f"round {r + 1}: {args.commit} {1e6 * then[1] / args.deals:.1f} µs a deal, now "
                      f"{1e6 * now[1] / args.deals:.1f} µs a deal: {ratios[-1]:.1f}x "
                      f"({now[0]}/{args.deals} winnable in both)", flush=True)  # fmt: skip
        finally:
            subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(then_dir)],
                           capture_output=True)  # fmt: skip
    print(f"median over {args.rounds} rounds: {statistics.median(ratios):.1f}x faster than {args.commit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
