"""How well can Zudecken be played? Every kind of player on the benchmark's held-out deals, one table.

    python -m quadrat_env.experiments.zudecken.how_well                     # about 8 minutes on 2 cores
    python -m quadrat_env.experiments.zudecken.how_well --update-docs

Rows: random, largest-group greedy, the hand rule, the published model of each learned kind (the
benchmark has every seed; models play in the benchmark's batches, so the two tables agree), the
extra models of ``experiments/models/zudecken/extra.yml``, the planner at several sample budgets,
and two upper bounds (``quadrat_env.agents.bounds``): the one-level bound (the first decision made
from what the player sees, clairvoyant after it) and the clairvoyant solver (it knows the stock).
Each row: deals, win rate, 95% interval (Wilson; for the one-level bound, whose per-deal values are
fractions, the normal interval of the mean), and cost per decision (per deal for the bounds). All
rows play ``reset(seed=10**9 + i)``; the cheap ones 10,000 deals, the planners and the one-level
bound fewer.
"""

from __future__ import annotations

import argparse
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from quadrat_env.agents import Agent, GreedyAgent, RandomAgent, bounds, evaluate, make, wilson
from quadrat_env.agents.evaluate import Z95
from quadrat_env.agents.hand import HandRuleAgent
from quadrat_env.agents.planner import SAMPLES
from quadrat_env.agents.sb3_agent import SB3Agent
from quadrat_env.experiments.benchmark import MODEL_BATCH, MODEL_KINDS, MODELS, learned_from
from quadrat_env.experiments.common.committed import published_seed
from quadrat_env.experiments.common.pages import docs_page, write_tables

from quadrat_env import seeds
from quadrat_env.arguments import at_least, description_of
from quadrat_env.extras import command, importing

with importing(__name__):  # the 'train' extra: one line naming it, not a traceback, if missing
    import yaml

ZU = "quadrat_env/Zudecken-v0"
PAGE = Path("docs") / "research" / "zudecken.md"  # --update-docs, from the repository root
MARKERS = ("<!-- how-well:start -->", "<!-- how-well:end -->")


def row(name: str, deals: range, play: Any) -> dict[str, Any]:
    """Evaluate one player; ``play`` is an agent, or a bound: a callable giving per-deal values."""
    start = time.perf_counter()
    if not isinstance(play, Agent):
        values = np.asarray(play(ZU, deals), dtype=np.float64)
        wins, decisions = float(values.sum()), len(deals)  # cost per deal
        if np.isin(values, (0.0, 1.0)).all():
            low, high = wilson(int(wins), len(deals))
        else:  # fractions: the normal interval of the mean
            half = Z95 * values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else 1.0
            low, high = max(0.0, values.mean() - half), min(1.0, values.mean() + half)
    else:
        batch = MODEL_BATCH if isinstance(play, SB3Agent) else 128  # models as the benchmark plays them
        summary, episodes = evaluate(ZU, play, deals, progress=False, n_envs=batch)
        wins, decisions = summary.wins, sum(e.steps for e in episodes)
        low, high = wilson(wins, len(deals))
    seconds = time.perf_counter() - start
    out = {"player": name, "deals": len(deals), "wins": wins, "win_rate": wins / len(deals),
           "ci_low": low, "ci_high": high, "ms_per_decision": 1000 * seconds / max(decisions, 1),
           "seconds": seconds}  # fmt: skip
    print(f"{name:<34} {out['win_rate']:.2%} [{low:.2%}, {high:.2%}] on {len(deals):,} deals, "
          f"{out['ms_per_decision']:.3f} ms/decision", flush=True)  # fmt: skip
    return out


def run(deals: int, planner_deals: int, budgets: list[int], bound_deals: int,
        bound_samples: int) -> list[dict[str, Any]]:  # fmt: skip
    many, few = seeds.BENCHMARK.take(deals), seeds.BENCHMARK.take(planner_deals)
    rows = [row("random", many, RandomAgent(seed=0)), row("greedy (largest group)", many, GreedyAgent(ZU)),
            row("hand rule (keep matched upcards)", many, HandRuleAgent(ZU))]  # fmt: skip
    for name, path, algo in published_models() + [(n, p, "maskable_ppo") for n, p in extra_models()]:
        rows.append(row(name, many, SB3Agent.load(path, algo, ZU)))
    for samples in budgets:
        agent = make("planner", ZU, samples=samples, seed=0, adaptive=False)
        rows.append(row(f"planner, {samples} samples", few, agent))
    default = f"planner (default: up to {SAMPLES} samples, stopping once settled)"
    rows.append(row(default, few, make("planner", ZU, seed=0)))  # no time budget, as the benchmark
    one, bound_seeds = partial(bounds.one_level, samples=bound_samples), seeds.BENCHMARK.take(bound_deals)
    rows.append(row(f"bound: one level exact ({bound_samples} samples)", bound_seeds, one))
    rows.append(row("bound: clairvoyant solver (knows the stock)", many, bounds.clairvoyant))
    return rows


def published_models() -> list[tuple[str, Path, str]]:
    """(row name, file, algorithm) of each learned kind's published Zudecken model, named by what it
    learned from and its training seed (the benchmark plays every seed)."""
    out = []
    for kind, algo in MODEL_KINDS.items():
        path = MODELS / f"Zudecken-{kind}.zip"
        if path.is_file():
            seed = published_seed(MODELS, path.stem)
            how = learned_from(MODELS, ZU, kind, seed)
            out.append((f"learned from {how}: {kind}, seed {seed} (published)", path, algo))
    return out


def extra_models() -> list[tuple[str, Path]]:
    """Learned policies beside the published ones, as ``experiments/models/zudecken/extra.yml`` names
    them (file -> row name); each has its config beside it."""
    index = MODELS / "zudecken" / "extra.yml"
    if not index.is_file():
        return []
    return [(name, index.parent / file) for file, name in yaml.safe_load(index.read_text()).items()]


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| player | deals | win rate | 95% CI (Wilson) | ms per decision |", "|---|---:|---:|---|---:|"]
    for r in rows:
        cost = "per deal" if r["player"].startswith("bound") else "per decision"
        lines.append(f"| {r['player']} | {r['deals']:,} | {r['win_rate']:.2%} | "
                     f"[{r['ci_low']:.2%}, {r['ci_high']:.2%}] | {r['ms_per_decision']:.3f}"
                     f"{' (per deal)' if cost == 'per deal' else ''} |")  # fmt: skip
    return "\n".join(lines) + "\n"


@command
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=description_of(__doc__))
    p.add_argument("--deals", type=at_least(1), default=10_000, help="deals for the cheap players")
    p.add_argument("--planner-deals", type=at_least(1), default=1000)
    p.add_argument(
        "--budgets",
        type=at_least(1),
        nargs="+",
        default=[16, 64, 256, 1024],
        help="planner samples per decision",
    )
    p.add_argument("--bound-deals", type=at_least(1), default=2000, help="deals for the one-level bound")
    p.add_argument(
        "--bound-samples",
        type=at_least(1),
        default=1024,
        help="unseen orders sampled per deal for the one-level bound",
    )
    p.add_argument("--out", type=Path, default=Path("results"))
    p.add_argument(
        "--update-docs", action="store_true", help=f"write the table into {PAGE} (repository root)"
    )
    args = p.parse_args(argv)
    if args.update_docs:
        docs_page(p, PAGE)
    rows = run(args.deals, args.planner_deals, args.budgets, args.bound_deals, args.bound_samples)
    command = "python -m quadrat_env.experiments.zudecken.how_well " + " ".join(argv or sys.argv[1:])
    page = PAGE if args.update_docs else None
    write_tables(args.out, "how_well", rows, table(rows), page, command, MARKERS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
