"""Win rate of the planner against samples per move, on the same held-out Zudecken deals.

    python -m quadrat_env.experiments.zudecken.planner_curve --deals 1000 --samples 1 4 16 32 64

Writes ``<out>/planner_curve.json`` (with each deal's outcome, so that two runs can be compared deal by
deal) and ``<out>/planner_curve.md`` and prints the table.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from quadrat_env.agents import evaluate
from quadrat_env.agents.planner import PlannerAgent

from quadrat_env import seeds
from quadrat_env.arguments import description_of, positive_number
from quadrat_env.extras import command
from quadrat_env.files import atomic_write
from quadrat_env.registry import env_ids

EVAL_SEEDS = seeds.PLANNER_CURVE.start  # the curve's deals: seeds EVAL_SEEDS, EVAL_SEEDS + 1, ...


@command
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=description_of(__doc__))
    p.add_argument("--env", default="quadrat_env/Zudecken-v0", choices=env_ids())
    p.add_argument("--deals", type=int, default=200)
    p.add_argument("--samples", type=int, nargs="+", default=[1, 4, 16, 32])
    p.add_argument("--time-budget", type=positive_number, default=1.0, help="seconds per decision at most")
    p.add_argument("--adaptive", action="store_true", help="stop sampling once a decision is settled")
    p.add_argument("--out", type=Path, default=Path("results"))
    args = p.parse_args(argv)
    if args.deals < 1 or min(args.samples) < 1:
        p.error("--deals and every --samples must be >= 1")
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for samples in args.samples:
        agent = PlannerAgent(args.env, samples=samples, time_budget=args.time_budget, seed=0,
                             adaptive=args.adaptive)  # fmt: skip
        summary, episodes = evaluate(args.env, agent, seeds.PLANNER_CURVE.take(args.deals))
        decisions = sum(e.steps for e in episodes)
        row = {
            **summary.as_dict(),
            "samples": samples,
            "adaptive": args.adaptive,
            "seconds_per_decision": summary.seconds / decisions,
            "cut_short": agent.cut_short,  # decisions the time budget ended (> 0: depends on the machine)
            "won_deals": "".join("1" if e.won else "0" for e in episodes),
        }  # per deal, to pair runs
        rows.append(row)
        print(f"samples {samples:>4}: won {row['wins']}/{row['episodes']} = {row['win_rate']:.2%} "
              f"[{row['ci_low']:.2%}, {row['ci_high']:.2%}], "
              f"{row['seconds_per_decision'] * 1000:.1f} ms/decision", flush=True)  # fmt: skip
    lines = ["| samples per move | deals | win rate | 95% CI (Wilson) | ms per decision |",
             "|---:|---:|---:|---|---:|"]  # fmt: skip
    lines += [f"| {r['samples']} | {r['episodes']} | {r['win_rate']:.2%} | "
              f"[{r['ci_low']:.2%}, {r['ci_high']:.2%}] | {r['seconds_per_decision'] * 1000:.1f} |"
              for r in rows]  # fmt: skip
    atomic_write(args.out / "planner_curve.json", json.dumps(rows, indent=2))
    atomic_write(args.out / "planner_curve.md", "\n".join(lines) + "\n")
    print("\n" + "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
