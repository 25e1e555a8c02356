"""Zudecken's optimum, bracketed: the best policy's win rate from below, the one-level information
bound from above, each on the benchmark's held-out deals with its 95% interval.

    python -m quadrat_env.experiments.zudecken.optimum --jobs 2      # 52 cards: about 23 minutes on 2 cores
    python -m quadrat_env.experiments.zudecken.optimum --env quadrat_env/Zudecken32-v0 --jobs 2

The exact search (``.exact_values``) has since computed the optimum of both packs; the bracket is
what held before it, and on either pack it checks the bound against the exact value: the file
keeps the pack's exact optimum (``exact``, from ``results/zudecken_exact.json`` or the file it
rewrites) beside the bracket, and the summary says whether the bracket holds it and how far above
it the upper end lies.

* **Lower:** the optimum is at least any policy's win probability. The planner (the best policy
  measured) plays ``--deals`` held-out deals; the lower end of its Wilson 95% interval.
* **Upper:** the one-level bound (``quadrat_env.agents.bounds.one_level``): every player makes
  its first real decision from what it sees and can do no better than clairvoyance after it, so the
  bound is at least the optimum; its per-deal estimate (the best move's share of sampled unseen
  orders the clairvoyant solver still wins) is biased upward, never downward. The upper end of the
  normal 95% interval of its mean over ``--bound-deals`` deals.

Each side holds with 97.5% confidence (one side of a 95% interval), the two together with at least
95%. Writes ``results/zudecken_optimum.json`` (52 cards; ``zudecken32_optimum.json`` for 32) and
the run's log beside it.
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
from quadrat_env.agents import bounds, evaluate, make, wilson
from quadrat_env.agents.evaluate import Z95
from quadrat_env.experiments.common.parallel import run_tasks

from quadrat_env import seeds
from quadrat_env.arguments import at_least, description_of
from quadrat_env.extras import command
from quadrat_env.files import atomic_write

ZU = "quadrat_env/Zudecken-v0"
#: Each pack's result files' stem and its ranks a suit (the key of ``zudecken_exact.json``).
PACKS = {ZU: ("zudecken_optimum", 13), "quadrat_env/Zudecken32-v0": ("zudecken32_optimum", 8)}
CHUNK = 250  # deals a task: progress every few seconds, and the same values at any --jobs


def _planner_wins(env_id: str, deals: range) -> list[float]:
    """1.0 for each deal the default planner wins (its own generator per chunk: the same at any --jobs).
    The registry's planner, as the benchmark plays it: no time budget, so the moves do not depend on
    the machine or its load."""
    _, episodes = evaluate(env_id, make("planner", env_id, seed=deals.start), deals, progress=False)
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


def known_exact(out: Path, env_id: str) -> dict[str, Any]:
    """The pack's exact optimum, if computed: ``exact`` and ``exact_solve`` of the file a new bracket
    rewrites, else the pack's value in ``zudecken_exact.json``; ``{}`` if neither has it. A new
    bracket keeps it: rewriting the file never drops a computed optimum."""
    stem, ranks = PACKS[env_id]
    own_path, solved_path = out / f"{stem}.json", out / "zudecken_exact.json"
    own = _read(own_path)
    if own.get("exact") is not None:
        path, kept = own_path, {key: own[key] for key in ("exact", "exact_solve") if key in own}
    else:
        pack = _read(solved_path).get("ranks", {}).get(str(ranks))
        path, kept = solved_path, ({"exact": pack.get("value")} if isinstance(pack, dict) else {})
    value = kept.get("exact")
    if kept and (isinstance(value, bool) or not isinstance(value, float | int) or not 0 <= value <= 1):
        raise ValueError(f"{path}: the exact optimum must be a win rate in [0, 1], got {value!r}")
    return kept


def _read(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"{path} is not a readable results file: {err}") from None
    if not isinstance(data, dict) or not isinstance(data.get("ranks", {}), dict):
        raise ValueError(f"{path} is not a readable results file: not a JSON object of results")
    return data


def bracket(deals: int, bound_deals: int, bound_samples: int, jobs: int, log: list[str],
            progress: bool = True, env_id: str = ZU) -> dict:  # fmt: skip
    """The lower and upper ends, with what each rests on."""
    start = time.perf_counter()
    wins = _values(
        "planner", partial(_planner_wins, env_id), seeds.BENCHMARK.take(deals), jobs, log, progress
    )
    low, high = wilson(int(wins.sum()), len(wins))
    one = partial(bounds.one_level, env_id, samples=bound_samples)
    bound = _values("one-level bound", one, seeds.BENCHMARK.take(bound_deals), jobs, log, progress)
    half = Z95 * bound.std(ddof=1) / np.sqrt(len(bound))
    return {
        "env_id": env_id,
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
    p = argparse.ArgumentParser(description=description_of(__doc__))
    p.add_argument("--env", choices=sorted(PACKS), default=ZU, help="the pack (52 cards by default)")
    p.add_argument("--deals", type=at_least(2), default=10_000, help="held-out deals for the planner")
    p.add_argument("--bound-deals", type=at_least(2), default=10_000, help="deals for the one-level bound")
    p.add_argument("--bound-samples", type=at_least(1), default=1024, help="unseen orders sampled a deal")
    p.add_argument("--jobs", type=at_least(1), default=1)
    p.add_argument("--out", type=Path, default=Path("results"))
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    if args.out.exists() and not args.out.is_dir():
        p.error(f"--out {args.out} is a file, not a folder")
    try:  # before the work: a bad results file stops the run before it, not after
        exact = known_exact(args.out, args.env)
    except ValueError as err:
        p.error(str(err))
    log: list[str] = []
    result = bracket(args.deals, args.bound_deals, args.bound_samples, args.jobs, log, not args.no_progress,
                     args.env)  # fmt: skip
    result.update(exact)
    result["command"] = "python -m quadrat_env.experiments.zudecken.optimum " + " ".join(argv or sys.argv[1:])
    summary = _summary(result, args.deals, args.bound_deals)
    stem = args.out / PACKS[args.env][0]
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write(stem.with_suffix(".json"), json.dumps(result, indent=2) + "\n")
    atomic_write(stem.with_suffix(".log"), "\n".join([result["command"], *log, summary]) + "\n")
    print(summary)
    return 0


def _summary(result: dict[str, Any], deals: int, bound_deals: int) -> str:
    """One line: the bracket, what each end rests on, and, with the exact optimum known, the check."""
    line = (f"{result['env_id'].split('/')[-1]}, optimal win rate between {result['lower']:.2%} and "
            f"{result['upper']:.2%}: planner {result['planner']['win_rate']:.2%} on {deals:,} deals, "
            f"one-level bound {result['one_level_bound']['mean']:.2%} on {bound_deals:,} deals "
            f"({result['seconds']:.0f} s)")  # fmt: skip
    exact = result.get("exact")
    if exact is not None:
        holds = "holds" if result["lower"] <= exact <= result["upper"] else "DOES NOT hold"
        line += (f"; the bracket {holds} the exact optimum {exact:.2%}, the upper end "
                 f"{(result['upper'] - exact) * 100:.1f} points above it")  # fmt: skip
    return line


if __name__ == "__main__":
    sys.exit(main())
