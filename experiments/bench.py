"""``quadrat-bench``: benchmark any policy on the held-out deals, next to greedy and the planner.

    quadrat-bench --env Zudecken --agent mypkg.policies:make_agent --deals 1000
    quadrat-bench --env Zudecken --model model.zip --algo maskable_ppo
    quadrat-bench --env Zudecken --agent hand --out results/hand

The agent is a built-in name (random, greedy, hand, planner), a Python factory ``module:callable``
returning an object with SB3's ``predict(observation, state, episode_start, deterministic,
action_masks=...)``, or a saved SB3 model (``--model``; nothing in the file is unpickled, see
``agents.safe_load``). It plays ``reset(seed=seed_start + i)`` for i < deals, as do greedy and the
planner, so the comparison is paired: the table shows the deals only one side won and an exact
McNemar p-value. Per-deal outcomes go to ``<out>/<agent>.csv`` (seed, won, cards_left, steps,
illegal_actions), which pandas and rliable read as they are.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import math
import sys
from pathlib import Path
from typing import Any

from agents import Episode, GreedyAgent, RandomAgent, Summary, evaluate
from agents.hand import HandRuleAgent
from agents.planner import PlannerAgent
from quadrat_env import seeds
from quadrat_env.core.checks import at_least
from quadrat_env.registry import env_ids, short_names

BUILT_IN = ("random", "greedy", "hand", "planner")


def make_agent(spec: str, env_id: str) -> Any:
    """A built-in agent by name, or ``module:factory`` called as ``factory(env_id)``."""
    if spec == "random":
        return RandomAgent(seed=0)
    if spec == "greedy":
        return GreedyAgent(env_id)
    if spec == "hand":
        return HandRuleAgent(env_id)
    if spec == "planner":
        return PlannerAgent(env_id, seed=0)
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ValueError(f"--agent must be one of {list(BUILT_IN)} or module:factory, got {spec!r}")
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as err:
        raise ValueError(f"--agent {spec}: cannot load it ({err})") from None
    agent = factory(env_id)
    if not callable(getattr(agent, "predict", None)):
        raise ValueError(f"--agent {spec}: {type(agent).__name__} has no predict(...) method")
    if not hasattr(agent, "name"):
        agent.name = attr
    return agent


def mcnemar(only_a: int, only_b: int) -> float:
    """Exact two-sided McNemar p-value from the deals only one side won."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(only_a, only_b) + 1)) / 2**n
    return min(1.0, 2 * tail)


def file_name(agent: str) -> str:
    """An agent's name as a file name: ``hand rule`` -> ``hand-rule``."""
    return "".join(c if c.isalnum() or c in "._" else "-" for c in agent).strip("-") or "agent"


def write_deals(path: Path, episodes: list[Episode]) -> None:
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["seed", "won", "cards_left", "steps", "illegal_actions"])
        out.writerows([e.seed, int(e.won), e.cards_left, e.steps, e.illegal] for e in episodes)


def compare(name: str, mine: list[Episode], theirs: list[Episode], other: str) -> dict[str, Any]:
    only_mine = sum(a.won and not b.won for a, b in zip(mine, theirs, strict=True))
    only_theirs = sum(b.won and not a.won for a, b in zip(mine, theirs, strict=True))
    return {"agent": name, "against": other, "only_agent_won": only_mine, "only_baseline_won": only_theirs,
            "mcnemar_p": mcnemar(only_mine, only_theirs)}  # fmt: skip


def row(s: Summary) -> str:
    return (f"| {s.agent} | {s.episodes} | {s.win_rate:.2%} | [{s.ci_low:.2%}, {s.ci_high:.2%}] | "
            f"{s.mean_cards_left:.2f} | {s.illegal_rate:.2%} | {s.seconds:.1f} |")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    names = short_names()
    p = argparse.ArgumentParser(prog="quadrat-bench", description=__doc__.splitlines()[0])
    p.add_argument("--env", required=True, help=f"an env ID or one of {sorted(names)}")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--agent", help=f"{', '.join(BUILT_IN)}, or module:factory (called with the env ID)")
    who.add_argument("--model", type=Path, help="a saved SB3 / sb3-contrib model (.zip)")
    p.add_argument("--algo", choices=("ppo", "maskable_ppo"), help="the algorithm of --model")
    p.add_argument("--deals", type=at_least(1), default=1000)
    p.add_argument("--seed-start", type=at_least(0), default=seeds.BENCHMARK.start,
                   help="deal i is reset(seed=SEED_START + i); default: the held-out benchmark deals")
    p.add_argument("--baselines", nargs="*", choices=("greedy", "planner"), default=["greedy", "planner"])
    p.add_argument("--out", type=Path, default=Path("results/bench"))
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    env_id = names.get(args.env, args.env)
    if env_id not in env_ids():
        p.error(f"unknown env {args.env!r}; choose an ID or one of {sorted(names)}")
    if args.model is not None and args.algo is None:
        p.error("--model needs --algo (ppo or maskable_ppo)")
    try:
        if args.model is not None:
            from agents.sb3_agent import SB3Agent

            agent = SB3Agent.load(args.model, args.algo, env_id, name=args.model.stem)
        else:
            agent = make_agent(args.agent, env_id)
    except (ValueError, FileNotFoundError) as err:
        p.error(str(err))
    deals = range(args.seed_start, args.seed_start + args.deals)
    args.out.mkdir(parents=True, exist_ok=True)
    summary, episodes = evaluate(env_id, agent, deals, progress=not args.no_progress, n_envs=128)
    write_deals(args.out / f"{file_name(summary.agent)}.csv", episodes)
    rows, comparisons = [summary], []
    for base in args.baselines:
        if base == agent.name:
            continue
        other, theirs = evaluate(env_id, make_agent(base, env_id), deals, progress=not args.no_progress,
                                 n_envs=128)  # fmt: skip
        write_deals(args.out / f"{file_name(other.agent)}.csv", theirs)
        rows.append(other)
        comparisons.append(compare(summary.agent, episodes, theirs, base))
    lines = [f"{env_id}, deals reset(seed={args.seed_start} + i), i < {args.deals}", "",
             "| agent | deals | win rate | 95% CI (Wilson) | mean cards left | illegal-action rate "
             "| seconds |",
             "|---|---:|---:|---|---:|---:|---:|", *map(row, rows), ""]  # fmt: skip
    lines += [f"- against {c['against']}: {c['only_agent_won']} deals won only by {c['agent']}, "
              f"{c['only_baseline_won']} only by {c['against']}; exact McNemar p = {c['mcnemar_p']:.3g}"
              for c in comparisons]  # fmt: skip
    print("\n".join(lines))
    result = {"env_id": env_id, "seed_start": args.seed_start, "deals": args.deals,
              "rows": [r.as_dict() for r in rows], "paired": comparisons}  # fmt: skip
    (args.out / "bench.json").write_text(json.dumps(result, indent=2))
    (args.out / "bench.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
