"""The Zudecken ladder: every player on every rung (4 to 13 ranks a suit), on the same held-out deals,
as a share of the rung's exact optimum.

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
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from quadrat_env.agents import available, evaluate, make
from quadrat_env.experiments.zudecken import RESULTS, optimum
from quadrat_env.experiments.zudecken.ladder_table import write_result

from quadrat_env import seeds
from quadrat_env.extras import command
from quadrat_env.files import atomic_write
from quadrat_env.registry import rules_for, short_name, spec_for

ZU = "quadrat_env/Zudecken-v0"
#: The players, in the table's order; ``td`` learns (one cell a training seed).
PLAYERS = ("optimal", "planner", "td", "greedy", "random", "solver")
#: How the benchmark names the players it shares with the ladder (rungs 8 and 13).
BENCHMARK_NAMES = {"solver": "solver (knows the stock)", "td": "rl"}
MODEL_BATCH = 1024  # the benchmark's batch for a network's deals (its MODEL_BATCH)
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
            if row["env_id"] == env_id and (
                row.get("algo") == name if player == "td" else row["agent"] == name
            ):
                cell = _cell(row, ranks, player, row.get("train_seed"), "results/benchmark.json")
                if player == "td":  # its budget, from the committed run's config
                    import yaml

                    config = MODELS / "configs" / f"{short_name(env_id)}-rl-seed{cell['seed']}.yml"
                    cell.update({"moves": yaml.safe_load(config.read_text(encoding="utf-8"))["n_moves"],
                                 "learned_from": row.get("learned_from", "the reward")})  # fmt: skip
                out.append(cell)
    return out


def _cell(row: dict[str, Any], ranks: int, player: str, seed: int | None, source: str) -> dict[str, Any]:
    keep = ("env_id", "episodes", "wins", "win_rate", "ci_low", "ci_high", "seconds")
    cell = {"ranks": ranks, "player": player, **{k: row[k] for k in keep}, "source": source}
    if seed is not None:
        cell["seed"] = int(seed)
    return cell


def play_cell(env_id: str, ranks: int, player: str, args: argparse.Namespace) -> dict[str, Any]:
    """One player on the rung's held-out deals."""
    from quadrat_env.experiments.benchmark import bound_row

    if player == "solver":
        return _cell(bound_row(env_id, seeds.BENCHMARK.take(args.deals)), ranks, player, None, "ladder")
    deals = args.planner_deals if player == "planner" else args.deals
    agent = make(player, env_id)
    if player == "optimal":
        agent.solve()  # the whole table first (its own progress lines), then the deals
    summary, _ = evaluate(env_id, agent, seeds.BENCHMARK.take(deals), progress=not args.no_progress,
                          n_envs=128)  # fmt: skip
    return _cell(summary.as_dict(), ranks, player, None, "ladder")


def td_cell(env_id: str, ranks: int, seed: int, args: argparse.Namespace) -> dict[str, Any]:
    """A finished TD(0) run's model on the rung's held-out deals, with the run's budget."""
    import torch
    import yaml
    from quadrat_env.agents.sb3_agent import SB3Agent

    torch.set_num_threads(1)
    run_dir = td_dir(args.work, env_id, seed)
    agent = SB3Agent.load(run_dir / "model.zip", "maskable_ppo", env_id, name="rl")
    summary, _ = evaluate(env_id, agent, seeds.BENCHMARK.take(args.deals), progress=not args.no_progress,
                          n_envs=MODEL_BATCH)  # fmt: skip
    run = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    budget = yaml.safe_load((run_dir / "config.yml").read_text(encoding="utf-8"))["n_moves"]
    cell = _cell(summary.as_dict(), ranks, "td", seed, "ladder")
    cell.update({"moves": budget, "train_seconds": run["seconds"], "learned_from": "the reward",
                 "network": "zudecken-afterstates", "run": str(run_dir)})  # fmt: skip
    return cell


def td_dir(work: Path, env_id: str, seed: int) -> Path:
    return work / "td" / f"{short_name(env_id)}-seed{seed}"


def td_command(env_id: str, seed: int, work: Path, moves: int | None = None) -> list[str]:
    """``td``'s command for the run (``td.yml``'s budget for the rung unless ``moves``): ``--resume``
    from its checkpoint, ``--overwrite`` of a run that stopped before its first checkpoint (nothing
    finished is there to lose)."""
    run_dir = td_dir(work, env_id, seed)
    cmd = [sys.executable, "-m", "quadrat_env.experiments.td", "--env", env_id, "--seed", str(seed),
           "--out", str(work), "--no-progress", *(["--moves", str(moves)] if moves else [])]  # fmt: skip
    if (run_dir / "checkpoint.npz").is_file():
        return [*cmd, "--resume"]
    return [*cmd, "--overwrite"] if run_dir.exists() else cmd


def train_all(todo: list[tuple[int, str, int]], args: argparse.Namespace) -> list[str]:
    """Train the TD(0) runs not yet finished, ``--jobs`` at once (each ``td`` process one core, its
    own checkpoints); each finished run's cell is written as it ends. Returns the failures."""
    waiting, running, failed = list(todo), [], []
    try:
        while waiting or running:
            while waiting and len(running) < args.jobs:
                ranks, env_id, seed = waiting.pop(0)
                if not (td_dir(args.work, env_id, seed) / "summary.json").is_file():
                    print(f"ladder: training TD(0) on {short_name(env_id)}, seed {seed}", flush=True)
                    running.append(
                        (
                            ranks,
                            env_id,
                            seed,
                            subprocess.Popen(td_command(env_id, seed, args.work, args.td_moves)),
                        )
                    )
                else:
                    running.append((ranks, env_id, seed, None))
            time.sleep(0.2 if any(p is None for *_, p in running) else 2.0)
            for job in [j for j in running if j[3] is None or j[3].poll() is not None]:
                running.remove(job)
                ranks, env_id, seed, proc = job
                if proc is not None and proc.returncode != 0:
                    failed.append(f"TD(0) on {short_name(env_id)} seed {seed}: td exited {proc.returncode}")
                    continue
                keep(cell_file(args.work, env_id, "td", seed), td_cell(env_id, ranks, seed, args))
    finally:  # Ctrl-C reaches the td processes too; they checkpoint and stop: wait for them
        for *_, proc in running:
            if proc is not None:
                proc.wait()
    return failed


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
            if player == "td":
                todo += [(ranks, env_id, s) for s in args.seeds
                         if read_cell(cell_file(args.work, env_id, "td", s), args.deals) is None]  # fmt: skip
            elif player != "optimal" or available("optimal", env_id):
                deals = args.planner_deals if player == "planner" else args.deals
                path = cell_file(args.work, env_id, player)
                if read_cell(path, deals) is None:
                    keep(path, play_cell(env_id, ranks, player, args))
    return train_all(todo, args) if todo else []


def collect(args: argparse.Namespace) -> dict[str, Any]:
    """The ladder as far as it is known: the benchmark's rows of rungs 8 and 13, and for the other
    rungs every kept cell (played on ``--deals``, the planner's on ``--planner-deals``), those of
    ``<out>/ladder.json`` where the work folder has none (a fresh clone's committed cells)."""
    earlier = args.out / "ladder.json"
    before = json.loads(earlier.read_text(encoding="utf-8"))["cells"] if earlier.is_file() else []
    cells: list[dict[str, Any]] = []
    for ranks, env_id in rungs().items():
        if env_id in spec_for(ZU).ids:
            cells += benchmark_cells(env_id, ranks, args.benchmark)
            continue
        for player in PLAYERS:
            deals = args.planner_deals if player == "planner" else args.deals
            pattern = f"{short_name(env_id)}-{player}{'-seed*' if player == 'td' else ''}.json"
            found = sorted(args.work.glob(f"cells/{pattern}"), key=lambda p: p.name)
            mine = [c for path in found if (c := read_cell(path, deals)) is not None]
            seen = {c.get("seed") for c in mine}
            mine += [c for c in before if c["env_id"] == env_id and c["player"] == player
                     and c["episodes"] == deals and c.get("seed") not in seen]  # fmt: skip
            cells += sorted(mine, key=lambda c: c.get("seed", -1))
    return {"schema": 1, "deals": args.deals, "planner_deals": args.planner_deals,
            "optimum": {str(r): optimum(r) for r in rungs()}, "cells": cells}  # fmt: skip


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="quadrat ladder", description=__doc__.splitlines()[0])
    p.add_argument("--ranks", type=int, nargs=2, default=[4, 13], metavar=("LOW", "HIGH"),
                   help="the rungs, ranks a suit (default: 4 13)")  # fmt: skip
    p.add_argument("--players", nargs="+", choices=PLAYERS, default=list(PLAYERS))
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="TD(0) training seeds")
    p.add_argument("--deals", type=int, default=10_000, help="held-out deals a rung (default 10,000)")
    p.add_argument("--planner-deals", type=int, default=1_000, help="the planner's (default 1,000)")
    p.add_argument("--jobs", type=int, default=1, help="TD(0) runs trained at once, one core each")
    p.add_argument("--td-moves", type=int, metavar="MOVES",
                   help="each TD(0) run's budget (default: td.yml's for the rung)")  # fmt: skip
    p.add_argument("--work", type=Path, default=Path("runs") / "ladder", help="where cells and runs are kept")
    p.add_argument("--out", type=Path, default=RESULTS, help="where ladder.{json,md,png} go")
    p.add_argument("--benchmark", type=Path, default=RESULTS / "benchmark.json",
                   help="the benchmark's rows of rungs 8 and 13")  # fmt: skip
    p.add_argument("--tables-only", action="store_true", help="play nothing: the table and figure from "
                   "the cells kept so far (and --out's ladder.json)")  # fmt: skip
    p.add_argument("--no-progress", action="store_true")
    return p


@command
def main(argv: list[str] | None = None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    low, high = args.ranks
    if not 4 <= low <= high <= 13:
        p.error(f"--ranks must be LOW HIGH with 4 <= LOW <= HIGH <= 13, got {low} {high}")
    if min(args.deals, args.planner_deals, args.jobs, args.td_moves or 1) < 1:
        p.error("--deals, --planner-deals, --jobs and --td-moves must be >= 1")
    if min(args.seeds) < 0 or len(set(args.seeds)) < len(args.seeds):
        p.error(f"--seeds must be distinct whole numbers >= 0, got {args.seeds}")
    try:
        failed = [] if args.tables_only else run(args)
        result = collect(args)
        write_result(result, args.out)
    except (OSError, ValueError) as err:
        p.error(str(err))
    for line in failed:
        print(f"ladder: {line}", file=sys.stderr)
    print(f"ladder: {len(result['cells'])} cells -> {args.out / 'ladder.md'}, {args.out / 'ladder.png'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
