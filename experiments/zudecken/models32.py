"""The 32-card imitation networks on the benchmark's held-out deals, against the exact optimum.

    python -m quadrat_env.experiments.zudecken.models32              # about 3 minutes on 2 cores
    python -m quadrat_env.experiments.zudecken.models32 --update-docs

Plays every model kept in ``experiments/models/zudecken32/`` (the afterstate networks that imitated
the exact values, their configs beside them) on the benchmark's 10,000 held-out Zudecken32 deals
(``reset(seed=10**9 + i)``), no search at play, and writes ``results/zudecken32_models.{json,md}``:
each seed's win rate with its Wilson interval and its share of the exact optimum, and each run's
mean over its seeds. ``--update-docs`` puts the table into the research page.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from quadrat_env.agents import evaluate, wilson
from quadrat_env.agents.sb3_agent import SB3Agent
from quadrat_env.experiments.benchmark import MODELS, exact_optima
from quadrat_env.experiments.common.pages import docs_page, write_tables

from quadrat_env import seeds
from quadrat_env.arguments import at_least, description_of
from quadrat_env.extras import command

Z32 = "quadrat_env/Zudecken32-v0"
PAGE = Path("docs") / "research" / "zudecken.md"  # --update-docs, from the repository root
MARKERS = ("<!-- models32:start -->", "<!-- models32:end -->")
#: What each run's file name says of it.
RUNS = {"exact": "32 channels, 12 epochs", "exact64": "64 channels, 4 layers, 8 epochs"}


def run(folder: Path, deals: int, optimum: float) -> list[dict[str, Any]]:
    """One row per model file (``<Name>-maskable_ppo-<run>-seed<k>.zip``), in name order."""
    rows = []
    for path in sorted(folder.glob("*.zip")):
        found = re.fullmatch(r".+-maskable_ppo-(.+)-seed(\d+)", path.stem)
        if found is None:  # not a model of this study
            continue
        summary, _ = evaluate(Z32, SB3Agent.load(path, "maskable_ppo", Z32), seeds.BENCHMARK.take(deals),
                              progress=False, n_envs=256)  # fmt: skip
        low, high = wilson(summary.wins, deals)
        rows.append({"run": found[1], "seed": int(found[2]), "model": path.name, "deals": deals,
                     "wins": summary.wins, "win_rate": summary.wins / deals, "ci_low": low,
                     "ci_high": high, "of_optimum": summary.wins / deals / optimum})  # fmt: skip
        print(f"{path.name}: {rows[-1]['win_rate']:.2%} [{low:.2%}, {high:.2%}]", flush=True)
    return rows


def table(rows: list[dict[str, Any]], optimum: float) -> str:
    lines = [f"| run | training seed | win rate | 95% CI (Wilson) | of the exact optimum ({optimum:.2%}) |",
             "|---|---:|---:|---|---:|"]  # fmt: skip
    for name in dict.fromkeys(r["run"] for r in rows):
        mine = [r for r in rows if r["run"] == name]
        for r in mine:
            lines.append(f"| {name} ({RUNS.get(name, 'see its config')}) | {r['seed']} | {r['win_rate']:.2%} "
                         f"| [{r['ci_low']:.2%}, {r['ci_high']:.2%}] | {r['of_optimum']:.1%} |")  # fmt: skip
        mean = sum(r["win_rate"] for r in mine) / len(mine)
        lines.append(f"| {name}: mean of {len(mine)} seeds | | {mean:.2%} | | {mean / optimum:.1%} |")
    return "\n".join(lines) + "\n"


@command
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=description_of(__doc__))
    p.add_argument("--deals", type=at_least(1), default=10_000, help="held-out deals a model")
    p.add_argument("--models", type=Path, default=MODELS / "zudecken32", help="the models' folder")
    p.add_argument("--benchmark", type=Path, default=Path("results/benchmark.json"),
                   help="the committed benchmark, for the exact optimum")  # fmt: skip
    p.add_argument("--out", type=Path, default=Path("results"))
    p.add_argument("--update-docs", action="store_true", help=f"write the table into {PAGE}")
    args = p.parse_args(argv)
    if args.update_docs:
        docs_page(p, PAGE)
    optimum = (
        exact_optima(json.loads(args.benchmark.read_text())).get(Z32) if args.benchmark.is_file() else None
    )
    if optimum is None:
        p.error(f"{args.benchmark} gives no exact Zudecken32 optimum")
    rows = run(args.models, args.deals, optimum)
    if not rows:
        p.error(f"no models in {args.models}")
    command_line = "python -m quadrat_env.experiments.zudecken.models32 " + " ".join(argv or sys.argv[1:])
    data = {"env_id": Z32, "exact_optimum": optimum, "rows": rows}
    write_tables(args.out, "zudecken32_models", data, table(rows, optimum),
                 PAGE if args.update_docs else None, command_line, MARKERS)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
