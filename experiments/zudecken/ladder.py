"""The Zudecken ladder: every player on every rung (4 to 13 ranks a suit) beside the exact optimum.

Each player plays the rung's held-out deals; its win rate is shown as a share of the rung's exact
optimum.

    quadrat ladder                                  # every rung and player; resumes where it stopped
    quadrat ladder --ranks 4 7 --players random greedy td --jobs 2
    quadrat ladder --tables-only                    # the table and figure again, playing nothing

A cell is one player on one rung (a learner: one training seed). Each is kept as it ends, in the
work folder (``--work``, default ``runs/ladder``: ``cells/<Name>-<player>[-seed<k>].json``, and each
TD(0) run in ``td/<Name>-seed<k>``, checkpointed by ``td`` itself), so a stopped ladder continues
where it stopped and reuses every finished cell and trained model; the table holds every cell
kept so far, whichever rungs and players a run asked for. Rungs 8 and 13 are the
benchmark's Zudecken32 and Zudecken: their cells are its rows (``results/benchmark.json``, the same
held-out deals), not played again. Each rung's optimum is read from the exact solver's record
(``results/zudecken_exact.json``). Writes ``<out>/ladder.{json,md,png}`` (default ``results``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from quadrat_env.agents import available, evaluate, make
from quadrat_env.experiments.zudecken import RESULTS
from quadrat_env.experiments.zudecken import ladder_learners as learners
from quadrat_env.experiments.zudecken import rung_optimum as optimum
from quadrat_env.experiments.zudecken.ladder_curves import with_curve
from quadrat_env.experiments.zudecken.ladder_table import PAGE, write_result

from quadrat_env import seeds
from quadrat_env.arguments import description_of
from quadrat_env.extras import command
from quadrat_env.files import atomic_write
from quadrat_env.registry import rules_for, short_name, spec_for

ZU = "quadrat_env/Zudecken-v0"
#: The players, in the table's order; the learners (``ladder_learners``) have a cell a training seed.
PLAYERS = ("optimal", "planner", "imitation", "td", "ppo", "greedy", "random", "solver")
#: How the benchmark names the players it shares with the ladder (rungs 8 and 13): the learners by
#: their kind (``algo``) and how they learned.
BENCHMARK_NAMES = {"solver": "solver (knows the stock)", "td": "rl", "imitation": "maskable_ppo",
                   "ppo": "ppo_jax"}  # fmt: skip
MODELS = RESULTS.parent / "experiments" / "models"  # the committed models, their configs and summaries


def rungs() -> dict[int, str]:
    """Ranks a suit -> the rung's env ID, from the registry (Zudecken's IDs and rungs)."""
    ids = spec_for(ZU).every_id
    return dict(sorted((rules_for(i).pack_size // 4, i) for i in ids))


def cell_file(work: Path, env_id: str, player: str, seed: int | None = None) -> Path:
    tag = "" if seed is None else f"-seed{seed}"
    return work / "cells" / f"{short_name(env_id)}-{player}{tag}.json"


def benchmark_cells(env_id: str, ranks: int, bench: Path) -> list[dict[str, Any]]:
    """The benchmark's rows of ``env_id`` for the ladder's players (rungs 8 and 13)."""
    rows = json.loads(bench.read_text(encoding="utf-8"))["rows"]
    out = []
    for player in PLAYERS:
        name = BENCHMARK_NAMES.get(player, player)
        for row in rows:
            learned = player in learners.LEARNERS
            if row["env_id"] != env_id or (row.get("algo") if learned else row["agent"]) != name:
                continue
            if learned and row.get("learned_from") != learners.LEARNERS[player][2]:
                continue  # 52 cards: MaskablePPO imitated the clairvoyant solver, not exact values
            out.append(learners.cell_of(row, ranks, player, row.get("train_seed"), "results/benchmark.json"))
            if learned:
                out[-1].update(_committed_budget(env_id, name, out[-1]["seed"], row["learned_from"]))
    return out


def _committed_budget(env_id: str, kind: str, seed: int, learned_from: str) -> dict[str, Any]:
    """A committed learner's budget and how it learned, from its run's config."""
    import yaml

    path = MODELS / "configs" / f"{short_name(env_id)}-{kind}-seed{seed}.yml"
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    if "n_moves" in config:
        return {"learned_from": learned_from, "moves": config["n_moves"]}
    return {"learned_from": learned_from, "deals_labelled": config["deals_per_round"] * config["rounds"]}


def play_cell(env_id: str, ranks: int, player: str, args: argparse.Namespace) -> dict[str, Any]:
    """One player on the rung's held-out deals."""
    from quadrat_env.experiments.benchmark import bound_row

    if player == "solver":
        return learners.cell_of(
            bound_row(env_id, seeds.BENCHMARK.take(args.deals)), ranks, player, None, "ladder"
        )
    deals = args.planner_deals if player == "planner" else args.deals
    agent = make(player, env_id)
    if player == "optimal":
        agent.solve()  # the whole table first (its own progress lines), then the deals
    summary, _ = evaluate(env_id, agent, seeds.BENCHMARK.take(deals), progress=not args.no_progress,
                          n_envs=128)  # fmt: skip
    return learners.cell_of(summary.as_dict(), ranks, player, None, "ladder")


def keep(path: Path, cell: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(cell, indent=1))
    share = cell["win_rate"] / optimum(cell["ranks"])
    seed = f" seed {cell['seed']}" if "seed" in cell else ""
    print(f"ladder: {short_name(cell['env_id']):<11} {cell['player']:<8}{seed} won {cell['wins']}/"
          f"{cell['episodes']} = {cell['win_rate']:.2%} ({share:.1%} of the optimum)",
          flush=True)  # fmt: skip


def read_cell(path: Path, episodes: int) -> dict[str, Any] | None:
    """A kept cell, if it is whole and played on ``episodes`` deals (else it is played again)."""
    try:
        cell = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return cell if isinstance(cell, dict) and cell.get("episodes") == episodes else None


def run(args: argparse.Namespace) -> list[str]:
    """Play every cell asked for that is not kept yet (train its TD(0) runs); the failures."""
    ladder = {r: i for r, i in rungs().items() if args.ranks[0] <= r <= args.ranks[1]}
    todo = []
    for ranks in ladder:
        optimum(ranks)  # every optimum read before any work
    for ranks, env_id in ladder.items():
        if env_id in spec_for(ZU).ids:  # the benchmark's rows
            continue
        for player in args.players:
            if player in learners.LEARNERS:
                if player == "imitation" and not available("optimal", env_id):
                    continue  # no exact values to imitate above 10 ranks
                cells = {s: cell_file(args.work, env_id, player, s) for s in args.seeds}
                missing = [s for s, c in cells.items() if read_cell(c, args.deals) is None]
                todo += [(player, ranks, env_id, s) for s in missing]
            elif player != "optimal" or available("optimal", env_id):
                deals = args.planner_deals if player == "planner" else args.deals
                path = cell_file(args.work, env_id, player)
                if read_cell(path, deals) is None:
                    keep(path, play_cell(env_id, ranks, player, args))

    def kept(learner: str, env_id: str, seed: int, cell: dict[str, Any]) -> None:
        keep(cell_file(args.work, env_id, learner, seed), cell)

    return learners.train_all(todo, args, kept) if todo else []


def imported(args: argparse.Namespace) -> list[str]:
    """The runs under ``--import-runs`` as learner cells (``ladder_import``); the runs not taken."""
    from quadrat_env.experiments.zudecken import ladder_import

    ours = {env_id: r for r, env_id in rungs().items() if env_id not in spec_for(ZU).ids}
    return ladder_import.import_all(args.import_runs, ours, args, keep)


def collect(args: argparse.Namespace) -> dict[str, Any]:
    """The ladder as far as it is known: the benchmark's rows of rungs 8 and 13, and for the other
    rungs every kept cell (played on ``--deals``, the planner's on ``--planner-deals``; a learner's
    at its budget now), those of ``<out>/ladder.json`` where the work folder has none for that
    player and rung (a fresh clone's committed cells)."""
    earlier = args.out / "ladder.json"
    before = json.loads(earlier.read_text(encoding="utf-8"))["cells"] if earlier.is_file() else []
    cells: list[dict[str, Any]] = []
    for ranks, env_id in rungs().items():
        if env_id in spec_for(ZU).ids:
            cells += benchmark_cells(env_id, ranks, args.benchmark)
            continue
        for player in PLAYERS:
            deals = args.planner_deals if player == "planner" else args.deals
            seeded = "-seed*" if player in learners.LEARNERS else ""
            pattern = f"{short_name(env_id)}-{player}{seeded}.json"
            found = sorted(args.work.glob(f"cells/{pattern}"), key=lambda p: p.name)
            mine = [c for path in found if (c := read_cell(path, deals)) is not None] or [
                c
                for c in before
                if c["env_id"] == env_id and c["player"] == player and c["episodes"] == deals
            ]
            budget = learners.budget(player, env_id, args) if player in learners.LEARNERS else None
            kept = [with_curve(c, args.work) for c in mine if learners.cell_budget(c) == budget]
            cells += sorted(kept, key=lambda c: c.get("seed", -1))
    return {"schema": 1, "deals": args.deals, "planner_deals": args.planner_deals,
            "optimum": {str(r): optimum(r) for r in rungs()}, "cells": cells}  # fmt: skip


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="quadrat ladder", description=description_of(__doc__))
    p.add_argument("--ranks", type=int, nargs=2, default=[4, 13], metavar=("LOW", "HIGH"),
                   help="the rungs, ranks a suit (default: 4 13)")  # fmt: skip
    p.add_argument(
        "--players",
        nargs="+",
        choices=PLAYERS,
        default=list(PLAYERS),
        help="default: all (imitation: rungs of up to 10 ranks)",
    )
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="the learners' training seeds")
    p.add_argument("--deals", type=int, default=10_000, help="held-out deals a rung (default 10,000)")
    p.add_argument("--planner-deals", type=int, default=1_000, help="the planner's (default 1,000)")
    p.add_argument("--jobs", type=int, default=1, help="learners' runs trained at once, one core each")
    p.add_argument("--td-moves", type=int, metavar="MOVES",
                   help="each TD(0) run's budget (default: td.yml's for the rung)")  # fmt: skip
    p.add_argument("--ppo-moves", type=int, metavar="MOVES",
                   help="each PPO run's budget (default: ppo_jax_cpu.yml's for the rung)")  # fmt: skip
    p.add_argument("--imitation-deals", type=int, default=learners.IMITATION_DEALS, metavar="DEALS",
                   help="deals each imitation run labels (default: the 32-card models' 60,000)")  # fmt: skip
    p.add_argument("--work", type=Path, default=Path("runs") / "ladder", help="where cells and runs are kept")
    p.add_argument("--out", type=Path, default=RESULTS, help="where ladder.{json,md,png} go")
    p.add_argument("--benchmark", type=Path, default=RESULTS / "benchmark.json",
                   help="the benchmark's rows of rungs 8 and 13")  # fmt: skip
    p.add_argument("--import-runs", type=Path, nargs="+", metavar="DIR",
                   help="play only the finished td_jax / ppo_jax runs under DIR (the GPU script's "
                   "archive) as learner seeds, and train nothing")  # fmt: skip
    p.add_argument("--tables-only", action="store_true", help="play nothing: the table and figure from "
                   "the cells kept so far (and --out's ladder.json)")  # fmt: skip
    p.add_argument("--update-docs", action="store_true", help=f"the tables into {PAGE} too (run from the "
                   "repository root)")  # fmt: skip
    p.add_argument("--no-progress", action="store_true")
    return p


@command
def main(argv: list[str] | None = None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    low, high = args.ranks
    if not 4 <= low <= high <= 13:
        p.error(f"--ranks must be LOW HIGH with 4 <= LOW <= HIGH <= 13, got {low} {high}")
    moves = [m for m in (args.td_moves, args.ppo_moves) if m is not None]  # None: the settings file's
    if min(args.deals, args.planner_deals, args.jobs, *moves, args.imitation_deals) < 1:
        p.error("--deals, --planner-deals, --jobs, --td-moves, --ppo-moves and --imitation-deals "
                "must be >= 1")  # fmt: skip
    if args.tables_only and args.import_runs:
        p.error("--import-runs plays the runs it imports, --tables-only plays nothing: give one of them")
    if min(args.seeds) < 0 or len(set(args.seeds)) < len(args.seeds):
        p.error(f"--seeds must be distinct whole numbers >= 0, got {args.seeds}")
    try:
        if args.update_docs and not PAGE.is_file():
            raise ValueError(
                f"--update-docs writes {PAGE}, which is not here: run it from the repository root"
            )
        failed = [] if args.tables_only else imported(args) if args.import_runs else run(args)
        result = collect(args)
        write_result(result, args.out, args.update_docs, "quadrat ladder " + " ".join(argv or sys.argv[1:]))
    except (OSError, ValueError) as err:
        p.error(str(err))
    for line in failed:
        print(f"ladder: {line}", file=sys.stderr)
    wrote = ", ".join(str(args.out / f"ladder{end}") for end in (".md", ".png", "_curves.png"))
    print(f"ladder: {len(result['cells'])} cells -> {wrote}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
