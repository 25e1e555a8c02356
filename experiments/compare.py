"""``quadrat-bench``: benchmark any policy on the held-out deals, next to greedy and the planner.

    quadrat-bench --env Zudecken --agent mypkg.policies:make_agent --deals 1000
    quadrat-bench --env Zudecken --model model.zip --algo maskable_ppo
    quadrat-bench --env Zudecken --agent hand --out results/hand

The agent is a built-in name (random, greedy, hand, planner), a Python factory ``module:callable``
returning an object with SB3's ``predict(observation, state, episode_start, deterministic,
action_masks=...)``, or a saved SB3 model (``--model``; nothing in the file is unpickled, see
``quadrat_env.agents.safe_load``). It plays ``reset(seed=seed_start + i)`` for i < deals, as do greedy and the
planner, so the comparison is paired: the table shows the deals only one side won and an exact
McNemar p-value. A model plays ``--batch`` deals side by side, the benchmark's 1,024 by default, so
that a shipped model wins the deals the benchmark's table counts. Per-deal outcomes go to
``<out>/<agent>.csv`` (seed, won, cards_left, steps, illegal_actions), which pandas and rliable read
as they are.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from quadrat_env.agents import Episode, Summary, evaluate
from quadrat_env.agents import available as agent_available
from quadrat_env.agents import make as make_builtin
from quadrat_env.agents import names as agent_names
from quadrat_env.agents.evaluate import as_episodes, write_deals
from quadrat_env.agents.safe_load import ALGOS
from quadrat_env.experiments.benchmark import MODEL_BATCH, MODELS
from quadrat_env.experiments.common.parallel import (
    WorkerFailed,
    add_ray_argument,
    check_ray_argument,
    run_tasks,
)

from quadrat_env import seeds
from quadrat_env.arguments import at_least, description_of
from quadrat_env.core.checks import check_memory
from quadrat_env.extras import command
from quadrat_env.files import FolderBusy, data_files, exclusive_folder
from quadrat_env.journal import finish, replace_all
from quadrat_env.registry import env_ids, short_name, short_names


def make_agent(spec: str, env_id: str) -> Any:
    """A built-in agent by name, or ``module:factory`` called as ``factory(env_id)``."""
    if spec in agent_names():  # random, greedy, hand, planner, and the games' own (optimal)
        return make_builtin(spec, env_id)
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ValueError(f"--agent must be one of {list(agent_names())} or module:factory, got {spec!r}")
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # as ``python -m`` would: the user's own modules (their code runs)
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
    if n > 10_000:  # the integer sum grows with n squared; scipy's binomial test is as exact
        try:
            from scipy.stats import binomtest
        except ImportError:  # without scipy: the normal approximation, continuity corrected
            z = (abs(only_a - only_b) - 1) / math.sqrt(n)
            return min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2)))
        return float(binomtest(min(only_a, only_b), n, 0.5).pvalue)
    tail = sum(math.comb(n, k) for k in range(min(only_a, only_b) + 1)) / 2**n
    return min(1.0, 2 * tail)


def p_text(p: float) -> str:
    """``= 0.0123``; a p-value below the floats' range (it computes as 0) is ``< 1e-300``, not ``= 0``."""
    return f"= {p:.3g}" if p > 0 else "< 1e-300"


def new_folder(parent: Path, name: str) -> Path:
    """``parent/<name>-<date-time>``, one that does not exist yet (``-2``, ``-3``, ... within a second)."""
    stamp = f"{name}-{time.strftime('%Y%m%d-%H%M%S')}"
    folder, k = parent / stamp, 1
    while folder.exists():
        k += 1
        folder = parent / f"{stamp}-{k}"
    return folder


def file_name(agent: str) -> str:
    """An agent's name as a file name: ``hand rule`` -> ``hand-rule``."""
    return "".join(c if c.isalnum() or c in "._" else "-" for c in agent).strip("-") or "agent"


def compare(name: str, mine: Sequence[Episode], theirs: Sequence[Episode], other: str) -> dict[str, Any]:
    a, b = as_episodes(mine).won, as_episodes(theirs).won
    if len(a) != len(b):
        raise ValueError(f"{name} and {other} played {len(a)} and {len(b)} deals: not paired")
    only_mine, only_theirs = int((a & ~b).sum()), int((b & ~a).sum())
    return {"agent": name, "against": other, "only_agent_won": only_mine, "only_baseline_won": only_theirs,
            "mcnemar_p": mcnemar(only_mine, only_theirs)}  # fmt: skip


def row_line(s: Summary, optimum: float | None = None) -> str:
    share = "–" if optimum is None else f"{s.win_rate / optimum:.1%}"
    return (f"| {s.agent} | {s.episodes} | {s.win_rate:.2%} | [{s.ci_low:.2%}, {s.ci_high:.2%}] | {share} | "
            f"{s.mean_cards_left:.2f} | {s.illegal_rate:.2%} | {s.seconds:.1f} |")  # fmt: skip


def exact_optimum(env_id: str) -> float | None:
    """The ID's exact optimal win rate: the one a study's committed exact record holds (every rung of
    the Zudecken ladder), else, where the exact solver plays its pack, the one it computes, else
    the one a study's committed results hold, else None."""
    from quadrat_env.experiments.common.studies import exact_optima, recorded_optima

    recorded = recorded_optima().get(env_id)
    if recorded is not None:
        return recorded
    if not agent_available("optimal", env_id):
        return exact_optima().get(env_id)
    return make_builtin("optimal", env_id).optimum()  # the table is kept on disk: a later run reads it


def published_model(value: str) -> Path:
    """``--model``: a path, or the name of a model this package ships (``Zudecken-maskable_ppo``)."""
    path = Path(value)
    shipped = MODELS / f"{value}.zip"
    return shipped if not path.exists() and shipped.is_file() else path


#: File names that every run folder's model has (train, imitate, SB3's callbacks).
GENERIC_STEMS = ("model", "best_model", "final_model")


def model_name(path: Path) -> str:
    """A model's name in tables and CSV names: its file's stem, with its run folder's name where
    the stem is one every run has (``runs/ppo/Zudecken-seed1/model.zip`` -> ``Zudecken-seed1/model``),
    so two runs' models benchmarked into one folder keep separate CSVs."""
    return f"{path.parent.name}/{path.stem}" if path.stem in GENERIC_STEMS and path.parent.name else path.stem


def load_agent(who: tuple[str, ...], env_id: str) -> Any:
    """``("agent", spec)`` or ``("model", path, algo)``: the agent, built where it plays."""
    if who[0] == "model":
        from quadrat_env.agents.sb3_agent import SB3Agent

        return SB3Agent.load(who[1], who[2], env_id, name=model_name(Path(who[1])))
    return make_agent(who[1], env_id)


#: Deals an agent that is not a model plays side by side (its moves do not depend on it).
AGENT_BATCH = 256


def play(who: tuple[str, ...], env_id: str, deals: range, progress: bool,
         model_batch: int = MODEL_BATCH) -> tuple[Summary, list[Episode]]:  # fmt: skip
    """One agent on the deals (a task: it may run in a worker process); a model in batches of
    ``model_batch`` (a network's near ties can fall the other way in batches of another size)."""
    n_envs = model_batch if who[0] == "model" else AGENT_BATCH
    return evaluate(env_id, load_agent(who, env_id), deals, progress=progress, n_envs=n_envs)


def _parser(envs: dict[str, str]) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="quadrat-bench", description=description_of(__doc__))
    p.add_argument("--env", required=True, help=f"an env ID or one of {sorted(envs)}")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument(
        "--agent", help=f"{', '.join(agent_names())}, or module:factory (called with the env ID)"
    )
    who.add_argument("--model", type=published_model,
                     help="a saved SB3 / sb3-contrib model (.zip), or a shipped one by name: "
                          "Zudecken-maskable_ppo, Quadrille-ppo, ...")  # fmt: skip
    p.add_argument("--algo", choices=ALGOS, help="the algorithm of --model (default: read from the file)")
    p.add_argument("--deals", type=at_least(1), default=1000)
    p.add_argument(
        "--seed-start",
        type=at_least(0),
        default=seeds.BENCHMARK.start,
        help="deal i is reset(seed=SEED_START + i); default: the held-out benchmark deals",
    )
    p.add_argument("--baselines", nargs="*", choices=("greedy", "planner", "optimal"),
                   default=["greedy"],
                   help="played on the same deals (optimal: the exact policy, Zudecken of up to "
                        "10 ranks)")  # fmt: skip
    p.add_argument("--batch", type=at_least(1), default=MODEL_BATCH,
                   help=f"deals a --model plays side by side (default {MODEL_BATCH}, the benchmark's, so a "
                        "shipped model wins what the benchmark's table says; the bench.md records in "
                        "results/ were played with 256)")  # fmt: skip
    p.add_argument("--jobs", type=at_least(1), default=1, help="agents played in parallel processes")
    add_ray_argument(p)
    p.add_argument("--out", type=Path, help="the folder for bench.json, bench.md and the per-deal CSVs "
                   "(default: runs/bench/<Name>-<date-time>, a new one each run)")  # fmt: skip
    p.add_argument("--overwrite", action="store_true",
                   help="replace an earlier benchmark's files in --out (else it is refused)")  # fmt: skip
    p.add_argument("--plot", action="store_true",
                   help="also draw bench.png: each player's win rate with its interval, and the exact "
                        "optimum where known (needs matplotlib: the train extra)")  # fmt: skip
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--no-optimum", action="store_true",
                   help="skip the exact optimum beside the rows (every Zudecken pack's is read from "
                        "the exact solver's committed record)")  # fmt: skip
    return p


def parse(argv: list[str] | None) -> tuple[argparse.Namespace, str]:
    names = short_names()
    p = _parser(names)
    args = p.parse_args(argv)
    check_ray_argument(p, args)
    env_id = names.get(args.env, args.env)
    if env_id not in env_ids():
        p.error(f"unknown env {args.env!r}; choose an ID or one of {sorted(names)}")
    if args.out is None:  # a new folder each run, so that running the same command twice works
        args.out = new_folder(Path("runs") / "bench", short_name(env_id))
    if args.out.exists() and not args.out.is_dir():  # found now, not after every deal is played
        p.error(f"--out {args.out} is a file; it must name a folder (made if missing)")
    try:  # each agent's per-deal outcomes (38 bytes a deal), and a copy as a worker hands them back
        check_memory(args.deals * 40 * (len(args.baselines) + 2), f"--deals {args.deals:,}",
                     "lower --deals (or play them in parts with --seed-start)")  # fmt: skip
    except ValueError as err:
        p.error(str(err))
    if args.plot and importlib.util.find_spec("matplotlib") is None:  # found before any deal is played
        p.error("--plot needs matplotlib: pip install 'quadrat-env[train]'")
    if "optimal" in args.baselines and not agent_available("optimal", env_id):
        p.error(
            f"--baselines optimal: no exact policy for {env_id} (Zudecken packs of up to 10 ranks, 40 cards)"
        )
    try:  # build it here first, so that a bad agent or model is one clear line before any play
        agent = load_agent(("model", str(args.model), args.algo) if args.model else ("agent", args.agent),
                           env_id)  # fmt: skip
    except FileNotFoundError as err:
        shipped = sorted(m.stem for m in MODELS.glob(f"{short_name(env_id)}-*.zip"))
        p.error(f"{err}; the models shipped for {short_name(env_id)}: {', '.join(shipped) or 'none'}")
    except ValueError as err:
        p.error(str(err))
    if (args.out / "bench.json").exists() and not args.overwrite:
        p.error(f"--out {args.out} holds an earlier benchmark (bench.json); pass --overwrite to replace "
                "it, or choose another --out")  # fmt: skip
    args.name = agent.name
    return args, env_id


@command
def main(argv: list[str] | None = None) -> int:
    args, env_id = parse(argv)
    try:
        with exclusive_folder(args.out):  # held from the check below to the last file written
            _claim(args)
            return _run(args, env_id)
    except (FolderBusy, EarlierBenchmark) as err:
        print(f"quadrat-bench: error: {err}", file=sys.stderr)
        return 2


class EarlierBenchmark(ValueError):
    """The output folder holds an earlier benchmark, and --overwrite was not given."""


#: The files a benchmark writes in its folder (with one per-deal ``<agent>.csv`` each).
OUTPUTS = ("bench.json", "bench.md", "bench.png")
#: The journal of a benchmark's writes (``quadrat_env.journal.replace_all``), in its folder.
JOURNAL = ".bench-journal.json"


def _plot(result: dict[str, Any], path: Path) -> None:
    """``bench.png``: the benchmark's own win-rate panel (``plots.win_rates``) for these rows."""
    from quadrat_env.experiments.common.plots import win_rates

    best = result["exact_optimum"]
    win_rates(result, path, None if best is None else {result["env_id"]: best})


def _claim(args: argparse.Namespace) -> None:
    """Inside the folder's lock: an earlier benchmark there is refused without ``--overwrite``; with
    it, the earlier files stay until the new ones replace them (``_written``), so a stop while the
    deals are played leaves the earlier benchmark whole."""
    if (args.out / "bench.json").exists() and not args.overwrite:
        raise EarlierBenchmark(f"--out {args.out} holds an earlier benchmark (bench.json); pass "
                               "--overwrite to replace it, or choose another --out")  # fmt: skip
    finish(args.out / JOURNAL)  # an earlier run stopped in its renames: completed (or undone) first


def _written(out: Path, files: dict[str, bytes]) -> None:
    """The benchmark's files as one change: the new ones in, the earlier run's other files (its
    CSVs of agents not played now, a plot not drawn now) out, all together or (stopped) none."""
    old = [*(out / name for name in OUTPUTS), *data_files(out, "*.csv")]
    changes: dict[Path, bytes | None] = {p: None for p in old if p.exists()}
    changes.update({out / name: data for name, data in files.items()})
    replace_all(changes, out / JOURNAL)


def _csv(episodes: Sequence[Episode]) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        write_deals(Path(tmp) / "deals.csv", episodes)
        return (Path(tmp) / "deals.csv").read_bytes()


def _run(args: argparse.Namespace, env_id: str) -> int:
    deals = range(args.seed_start, args.seed_start + args.deals)
    mine = ("model", str(args.model), args.algo) if args.model else ("agent", args.agent)
    players = [mine] + [("agent", base) for base in args.baselines if base != args.name]
    progress = not args.no_progress and args.jobs == 1 and args.ray is None  # several bars would garble
    try:
        task = partial(play, env_id=env_id, deals=deals, progress=progress, model_batch=args.batch)
        results = list(run_tasks(task, players, args.jobs, lambda who: f"playing {who[1]}", ray=args.ray))
    except WorkerFailed as err:
        print(f"quadrat-bench: {err}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    (summary, episodes), rows, comparisons, files = results[0], [], [], {}
    for (row, played), who in zip(results, players, strict=True):
        files[f"{file_name(row.agent)}.csv"] = _csv(played)
        rows.append(row)
        if who is not mine:
            comparisons.append(compare(summary.agent, episodes, played, who[1]))
    optimum = None if args.no_optimum else exact_optimum(env_id)
    known = "not known" if optimum is None else f"{optimum:.4%}"
    title = f"{env_id}, deals reset(seed={args.seed_start} + i), i < {args.deals}; exact optimum: {known}"
    title += f"; the model played {args.batch} deals side by side" if args.model else ""
    lines = [title, "",
             "| agent | deals | win rate | 95% CI (Wilson) | of the exact optimum | mean cards left "
             "| illegal-action rate | seconds |",
             "|---|---:|---:|---|---:|---:|---:|---:|", *[row_line(r, optimum) for r in rows]]  # fmt: skip
    lines.append("")
    lines += [f"- against {c['against']}: {c['only_agent_won']} deals won only by {c['agent']}, "
              f"{c['only_baseline_won']} only by {c['against']}; exact McNemar p {p_text(c['mcnemar_p'])}"
              for c in comparisons]  # fmt: skip
    print("\n".join(lines))
    result = {"env_id": env_id, "seed_start": args.seed_start, "deals": args.deals, "exact_optimum": optimum,
              "model_batch": args.batch if args.model else None,
              "rows": [r.as_dict() for r in rows], "paired": comparisons}  # fmt: skip
    files |= {
        "bench.json": json.dumps(result, indent=2).encode(),
        "bench.md": ("\n".join(lines) + "\n").encode(),
    }
    if args.plot:
        with tempfile.TemporaryDirectory() as tmp:
            _plot(result, Path(tmp) / "bench.png")
            files["bench.png"] = (Path(tmp) / "bench.png").read_bytes()
    _written(args.out, files)
    print(f"wrote {args.out}/bench.json, bench.md and one per-deal CSV per agent")
    return 0


if __name__ == "__main__":
    sys.exit(main())
