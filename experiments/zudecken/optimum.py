"""Zudecken's optimum with 52 cards, bracketed: the best policy's win rate from below, the one-level
information bound from above, each on the benchmark's held-out deals with its 95% interval.

    python -m quadrat_env.experiments.zudecken.optimum --jobs 2      # about 10 minutes on 2 cores

The exact optimum (``quadrat_env.agents.zudecken.exact``) is computed up to 9 ranks a suit; 13 ranks are
out of its reach (see ``docs/research/zudecken.md``). What holds instead:

* **Lower:** the optimum is at least any policy's win probability. The planner (the best policy
  measured) plays ``--deals`` held-out deals; the lower end of its Wilson 95% interval.
* **Upper:** the one-level bound (``quadrat_env.agents.bounds.one_level``): every player makes
  its first real decision from what it sees and can do no better than clairvoyance after it, so the
  bound is at least the optimum; its per-deal estimate (the best move's share of sampled unseen
  orders the clairvoyant solver still wins) is biased upward, never downward. The upper end of the
  normal 95% interval of its mean over ``--bound-deals`` deals.

Each side holds with 97.5% confidence (one side of a 95% interval), the two together with at least
95%. Writes ``results/zudecken_optimum.json`` and the run's log beside it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from quadrat_env.agents import bounds, evaluate, wilson
from quadrat_env.agents.evaluate import Z95
from quadrat_env.agents.planner import PlannerAgent
from quadrat_env.experiments.parallel import run_tasks

from quadrat_env import seeds
from quadrat_env.core.checks import at_least
from quadrat_env.extras import command
from quadrat_env.files import atomic_write

ZU = "quadrat_env/Zudecken-v0"
CHUNK = 250  # deals a task: progress every few seconds, and the same values at any --jobs


def _planner_wins(deals: range) -> list[float]:
    """1.0 for each deal the default planner wins (its own generator per chunk: the same at any --jobs)."""
    _, episodes = evaluate(ZU, PlannerAgent(ZU, seed=deals.start), deals, progress=False)
    return [float(e.won) for e in episodes]


def _chunks(deals: range) -> list[range]:
    return [deals[i : i + CHUNK] for i in range(0, len(deals), CHUNK)]


def _values(name: str, fn: Any, deals: range, jobs: int, log: list[str], progress: bool) -> np.ndarray:
    """Per-deal values of ``fn`` over ``deals``, in chunks; a line of progress per chunk into ``log``."""
    start, out = time.perf_counter(), []
    for values in run_tasks(fn, _chunks(deals), jobs, describe=lambda d: f"{name}, deals {d.start}.."):
        out.extend(values)
        log.append(f"{name}: {len(out):,}/{len(deals):,} deals, mean {np.mean(out):.2%}, "
                   f"{time.perf_counter() - start:.0f} s")  # fmt: skip
        if progress:
            print(log[-1], file=sys.stderr, flush=True)
    return np.asarray(out, dtype=np.float64)


def bracket(deals: int, bound_deals: int, bound_samples: int, jobs: int, log: list[str],
            progress: bool = True) -> dict:  # fmt: skip
    """The lower and upper ends, with what each rests on."""
    start = time.perf_counter()
    wins = _values("planner", _planner_wins, seeds.BENCHMARK.take(deals), jobs, log, progress)
    low, high = wilson(int(wins.sum()), len(wins))
    one = partial(bounds.one_level, ZU, samples=bound_samples)
    bound = _values("one-level bound", one, seeds.BENCHMARK.take(bound_deals), jobs, log, progress)
    half = Z95 * bound.std(ddof=1) / np.sqrt(len(bound))
    return {
        "env_id": ZU,
        "exact": None,
        "lower": low,
        "upper": min(1.0, float(bound.mean() + half)),
        "planner": {
            "deals": len(wins),
            "wins": int(wins.sum()),
            "win_rate": float(wins.mean()),
            "ci95": [low, high],
        },  # fmt: skip
        "one_level_bound": {
            "deals": len(bound),
            "samples": bound_samples,
            "mean": float(bound.mean()),
            "ci95": [float(bound.mean() - half), float(bound.mean() + half)],
        },  # fmt: skip
        "seconds": round(time.perf_counter() - start, 1),
    }


@command
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--deals", type=at_least(2), default=10_000, help="held-out deals for the planner")
    p.add_argument("--bound-deals", type=at_least(2), default=10_000, help="deals for the one-level bound")
    p.add_argument("--bound-samples", type=at_least(1), default=1024, help="unseen orders sampled a deal")
    p.add_argument("--jobs", type=at_least(1), default=1)
    p.add_argument("--out", type=Path, default=Path("results"))
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    if args.out.exists() and not args.out.is_dir():
        p.error(f"--out {args.out} is a file, not a folder")
    log: list[str] = []
    result = bracket(args.deals, args.bound_deals, args.bound_samples, args.jobs, log, not args.no_progress)
    result["command"] = "python -m quadrat_env.experiments.zudecken.optimum " + " ".join(argv or sys.argv[1:])
    summary = (
        f"Zudecken (52 cards), optimal win rate between {result['lower']:.2%} and {result['upper']:.2%}: "
        f"planner {result['planner']['win_rate']:.2%} on {args.deals:,} deals, one-level bound "
        f"{result['one_level_bound']['mean']:.2%} on {args.bound_deals:,} deals ({result['seconds']:.0f} s)"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write(args.out / "zudecken_optimum.json", json.dumps(result, indent=2) + "\n")
    atomic_write(args.out / "zudecken_optimum.log", "\n".join([result["command"], *log, summary]) + "\n")
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
