"""How well can Zudecken be played? Every kind of player on the benchmark's held-out deals, one table.

    python -m quadrat_env.experiments.how_well                     # about 8 minutes on 2 cores
    python -m quadrat_env.experiments.how_well --update-readme

Rows: random, largest-group greedy, the hand rule, the committed learned policies (each training
seed), the planner at several sample budgets, and the clairvoyant solver (an upper bound: it knows
the stock). Each row: deals, win rate, Wilson 95% interval, and cost per decision. All rows play
``reset(seed=10**9 + i)``; the cheap ones 10,000 deals, the planners fewer.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
from quadrat_env.agents import Agent, GreedyAgent, RandomAgent, evaluate, wilson
from quadrat_env.agents.hand import HandRuleAgent
from quadrat_env.agents.planner import PlannerAgent
from quadrat_env.agents.sb3_agent import SB3Agent
from quadrat_env.agents.solver import Solver
from quadrat_env.experiments.benchmark import MODELS, model_paths, update_readme

from quadrat_env import seeds
from quadrat_env.core.checks import at_least

ZU = "quadrat_env/Zudecken-v0"
MARKERS = ("<!-- how-well:start -->", "<!-- how-well:end -->")


def row(name: str, deals: range, play: Any) -> dict[str, Any]:
    """Evaluate one player; ``play`` is an agent, or a callable returning (wins, decisions)."""
    start = time.perf_counter()
    if not isinstance(play, Agent):
        wins, decisions = play(deals)
    else:
        summary, episodes = evaluate(ZU, play, deals, progress=False, n_envs=128)
        wins, decisions = summary.wins, sum(e.steps for e in episodes)
    seconds = time.perf_counter() - start
    low, high = wilson(wins, len(deals))
    out = {"player": name, "deals": len(deals), "wins": wins, "win_rate": wins / len(deals),
           "ci_low": low, "ci_high": high, "ms_per_decision": 1000 * seconds / max(decisions, 1),
           "seconds": seconds}  # fmt: skip
    print(f"{name:<34} {out['win_rate']:.2%} [{low:.2%}, {high:.2%}] on {len(deals):,} deals, "
          f"{out['ms_per_decision']:.3f} ms/decision", flush=True)  # fmt: skip
    return out


def clairvoyant(deals: range) -> tuple[int, int]:
    env = gym.make(ZU).unwrapped
    solver, wins, decisions = Solver(env.game), 0, 0
    for seed in deals:
        env.reset(seed=seed)
        line = solver.line(env.state)
        wins += line is not None
        decisions += 1  # one solve per deal
    return wins, decisions


def run(deals: int, planner_deals: int, budgets: list[int]) -> list[dict[str, Any]]:
    many, few = seeds.BENCHMARK.take(deals), seeds.BENCHMARK.take(planner_deals)
    rows = [row("random", many, RandomAgent(seed=0)), row("greedy (largest group)", many, GreedyAgent(ZU)),
            row("hand rule (keep matched upcards)", many, HandRuleAgent(ZU))]  # fmt: skip
    for seed, path in model_paths(ZU, "maskable_ppo", MODELS):
        rows.append(row(f"learned: MaskablePPO, seed {seed}", many, SB3Agent.load(path, "maskable_ppo", ZU)))
    for samples in budgets:
        rows.append(row(f"planner, {samples} samples", few, PlannerAgent(ZU, samples=samples, seed=0)))
    rows.append(row("clairvoyant solver (knows the stock)", many, clairvoyant))
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| player | deals | win rate | 95% CI (Wilson) | ms per decision |", "|---|---:|---:|---|---:|"]
    for r in rows:
        cost = "per deal" if r["player"].startswith("clairvoyant") else "per decision"
        lines.append(f"| {r['player']} | {r['deals']:,} | {r['win_rate']:.2%} | "
                     f"[{r['ci_low']:.2%}, {r['ci_high']:.2%}] | {r['ms_per_decision']:.3f}"
                     f"{' (per deal)' if cost == 'per deal' else ''} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--deals", type=at_least(1), default=10_000, help="deals for the cheap players")
    p.add_argument("--planner-deals", type=at_least(1), default=1000)
    p.add_argument("--budgets", type=at_least(1), nargs="+", default=[1, 16, 32, 128, 256],
                   help="planner samples per decision")
    p.add_argument("--out", type=Path, default=Path("results"))
    p.add_argument("--update-readme", action="store_true")
    args = p.parse_args(argv)
    rows = run(args.deals, args.planner_deals, args.budgets)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "how_well.json").write_text(json.dumps(rows, indent=2))
    md = table(rows)
    (args.out / "how_well.md").write_text(md)
    print("\n" + md)
    if args.update_readme:
        command = "python -m quadrat_env.experiments.how_well " + " ".join(argv or sys.argv[1:])
        update_readme(md, command, markers=MARKERS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
