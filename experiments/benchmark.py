"""The benchmark: every agent on every registered env, over the same held-out seeded deals.

    python -m quadrat_env.experiments.benchmark                # 1,000 deals into runs/benchmark/<date-time>
    python -m quadrat_env.experiments.benchmark --deals 10000 --planner-deals 1000 --out results --update-docs

Per agent and env: win rate with a Wilson 95% interval, mean cards left, illegal-action rate,
episodes and wall time; each learned kind over its committed training seeds: IQM with its 95%
bootstrap interval (rliable), mean and spread. Writes ``<out>/benchmark.{json,md}`` and PNG plots
into a new run folder (``runs/benchmark/<date-time>`` unless ``--out`` names one; the committed
tables: ``--out results``). ``--update-docs`` (from the repository root) puts the tables into
docs/benchmark.md and the Zudecken headline into README.md, between their markers.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import gymnasium as gym
from quadrat_env.agents import available, evaluate, make, wilson
from quadrat_env.agents.evaluate import write_deals
from quadrat_env.agents.planner import SAMPLES
from quadrat_env.agents.sb3_agent import SB3Agent
from quadrat_env.agents.solver import Solver
from quadrat_env.experiments.common import studies
from quadrat_env.experiments.common.committed import model_paths
from quadrat_env.experiments.common.pages import docs_page, generated_by, updated_page
from quadrat_env.experiments.common.parallel import (
    WorkerFailed,
    add_ray_argument,
    check_ray_argument,
    run_tasks,
)

from quadrat_env import seeds
from quadrat_env.arguments import description_of
from quadrat_env.extras import command
from quadrat_env.files import FolderBusy, data_files, exclusive_folder
from quadrat_env.journal import JournalError, read_journal, replace_all
from quadrat_env.registry import env_ids
from quadrat_env.registry import short_name as env_name

EVAL_SEED = seeds.BENCHMARK.start  # held-out deals: reset(seed=EVAL_SEED + i); training never seeds these
MODELS = Path(__file__).parent / "models"
#: Where --update-docs writes, relative to the current folder (the repository root).
PAGE = Path("docs") / "benchmark.md"
README = Path("README.md")
MARKERS = ("<!-- benchmark:start -->", "<!-- benchmark:end -->")
SCHEMA_VERSION = 1
#: The kinds of committed model, each with the algorithm its file loads as: SB3's PPO and MaskablePPO
#: runs (train, imitate), ``rl``: the afterstate TD(0) runs (td, td_jax), ``td_ppo``: MaskablePPO runs
#: started from a TD run's model (``train --init <Name>-rl.zip``), ``ppo_jax``: the JAX PPO runs
#: (exported as MaskablePPO files), ``ppo_jax_afterstates``: those with the afterstate policy.
MODEL_KINDS = {"ppo": "ppo", "maskable_ppo": "maskable_ppo", "rl": "maskable_ppo", "td_ppo": "maskable_ppo",
               "ppo_jax": "maskable_ppo", "ppo_jax_afterstates": "maskable_ppo"}  # fmt: skip
#: The learned kinds' names in the tables (the others: their kind).
LABELS = {"rl": "afterstate TD(0) (rl)", "td_ppo": "MaskablePPO from TD(0) (td_ppo)",
          "ppo_jax": "PPO in JAX (ppo_jax)", "ppo_jax_afterstates": "PPO in JAX, afterstate policy "
          "(ppo_jax_afterstates)"}  # fmt: skip

#: Deals a network plays side by side (it predicts on batches this big). A deterministic agent's wins
#: do not depend on it up to float rounding at near ties, which another batch size can break the other
#: way (TD(0)'s Zudecken seed 1 won two more held-out deals in batches of 128): every table uses this.
MODEL_BATCH = 1024

#: What a model that learned from play learned from: the sparse reward (1 a won deal) or the dense.
REWARDS = ("the reward", "the dense reward")


def learned_from(models: Path, env_id: str, kind: str, seed: int) -> str:
    """How a committed model learned, from its run's config (``configs/<Name>-<kind>-seed<k>.yml``):
    "the reward" (sparse), "the dense reward" (its ``env_kwargs`` say ``reward_mode: dense``), "a
    clairvoyant solver's labels" or "exact values" (imitation names its labels in ``method``); "the
    reward" when the config says nothing else."""
    import yaml

    path = models / "configs" / f"{env_name(env_id)}-{kind}-seed{seed}.yml"
    config = (yaml.safe_load(path.read_text()) if path.is_file() else {}) or {}
    method = str(config.get("method", ""))
    if method.startswith("imitation of exact"):
        return "exact values"
    if method.startswith("imitation"):
        return "a clairvoyant solver's labels"
    return REWARDS[dense_reward(config)]


def dense_reward(config: dict[str, Any]) -> bool:
    """Whether a run's config has its env pay the dense reward (``env_kwargs: {reward_mode: dense}``)."""
    return (config.get("env_kwargs") or {}).get("reward_mode") == "dense"


def bound_row(env_id: str, deals: range) -> dict[str, Any]:
    """The clairvoyant solver: the share of deals that can be won at all."""
    env = gym.make(env_id).unwrapped
    solver = Solver(env.game)
    start, wins = time.perf_counter(), 0
    for seed in deals:
        env.reset(seed=seed)
        wins += solver.line(env.state) is not None
    low, high = wilson(wins, len(deals))
    return {"env_id": env_id, "agent": "solver (knows the stock)", "episodes": len(deals), "wins": wins,
            "win_rate": wins / len(deals), "ci_low": low, "ci_high": high, "mean_cards_left": None,
            "illegal_rate": 0.0, "seconds": time.perf_counter() - start}  # fmt: skip


def tasks(env_id: str, args: argparse.Namespace) -> list[tuple[Any, ...]]:
    """One task per agent on ``env_id``, in the order the table lists them."""
    out: list[tuple[Any, ...]] = [(env_id, "random"), (env_id, "greedy")]
    if args.planner_deals:
        out.append((env_id, "planner"))
    for kind in MODEL_KINDS:
        out += [(env_id, kind, seed, str(path)) for seed, path in model_paths(env_id, kind, args.models)]
    if available("optimal", env_id):  # the exact policy, and with it the exact optimum (32-card Zudecken)
        out.append((env_id, "optimal"))
    return [*out, (env_id, "solver")]


def run_task(task: tuple[Any, ...], args: argparse.Namespace) -> dict[str, Any]:
    """Evaluate one agent on one env over the held-out deals (runs in a worker with --jobs)."""
    env_id, kind = task[0], task[1]
    if kind == "solver":
        return bound_row(env_id, seeds.BENCHMARK.take(args.solver_deals))
    deals, extra = args.deals, {}
    if kind == "planner":
        agent, deals = make(kind, env_id, samples=args.planner_samples), args.planner_deals
    elif kind in ("random", "greedy", "optimal"):
        agent = make(kind, env_id)
    else:
        agent = SB3Agent.load(task[3], MODEL_KINDS[kind], env_id, name=kind)
        extra = {"algo": kind, "train_seed": task[2], "learned_from": learned_from(args.models, *task[:3])}
        import torch

        torch.set_num_threads(1)  # one per worker: two threads in each of two workers fight for 2 cores
    # deals side by side, so the networks predict on big batches (a deterministic agent's results do
    # not depend on how many, up to float rounding at near ties; the random agent's draws do, so it
    # keeps the 128 it was measured with)
    n_envs = MODEL_BATCH if "algo" in extra else 128
    summary, episodes = evaluate(env_id, agent, seeds.BENCHMARK.take(deals),
                                 progress=not args.no_progress, n_envs=n_envs)  # fmt: skip
    if kind == "optimal":  # the same table the agent played from, completed from the opening
        extra = {"exact_optimum": agent.optimum()}
    extra["decisions"] = int(episodes.steps.sum())  # the time a decision, from this run
    seed_tag = f"-seed{extra['train_seed']}" if "train_seed" in extra else ""
    write_deals(args.out / "deals" / f"{env_name(env_id)}-{agent.name}{seed_tag}.csv", episodes)
    print(f"{env_id:<26} {agent.name:<13}{extra.get('train_seed', '')!s:>2} "
          f"won {summary.wins}/{summary.episodes} = {summary.win_rate:.2%} ({summary.seconds:.1f}s)",
          flush=True)  # fmt: skip
    return {**summary.as_dict(), **extra}


def run(args: argparse.Namespace) -> dict[str, Any]:
    from quadrat_env.experiments.seed_rows import learned_summary  # rliable (the 'train' extra)

    optima = studies.exact_optima()  # read first: a bad results file stops the run before its work
    todo = [t for env_id in args.env or env_ids(rungs=False) for t in tasks(env_id, args)]
    if args.jobs > 1 or args.ray is not None:
        args.no_progress = True  # bars from several processes would garble the terminal
    # the last env's agents (Quadrille: the longest episodes) go first, for an even load;
    # the rows keep the table's order
    named = lambda task: f"the {task[1]} task on {task[0]}"  # noqa: E731 (a worker's failure names it)
    rows = list(run_tasks(partial(run_task, args=args), todo[::-1], args.jobs, named, ray=args.ray))[::-1]
    return {"schema_version": SCHEMA_VERSION, "eval_seed_start": EVAL_SEED, "deals": args.deals,
            "planner_deals": args.planner_deals, "planner_samples": args.planner_samples,
            "rows": rows, "learned": learned_summary(rows),
            "exact_optima": optima}  # fmt: skip


def exact_optima(result: dict[str, Any]) -> dict[str, float]:
    """Env ID -> the exact optimum: the optimal agent's where it played, else the studies' results."""
    optima = dict(result.get("exact_optima", {}))
    return optima | {r["env_id"]: r["exact_optimum"] for r in result["rows"] if "exact_optimum" in r}


def learned_label(kind: str, how: str | None) -> str:
    """A learned agent's name in the tables: what it is, not only the file format it is saved in
    (an imitation network is saved as a maskable_ppo model but is no reinforcement learner)."""
    if how and how not in REWARDS:
        return f"imitation of {how} ({kind} file)"
    return LABELS.get(kind, kind)


def _share(row: dict[str, Any], best: float | None) -> str:
    """A player's share of the optimum (none for a bound that sees the stock); past 100% with its
    interval, which holds 100%: within noise of the optimum, not above it."""
    if best is None or "stock" in row["agent"]:
        return "–"
    share = f"{row['win_rate'] / best:.1%}"
    return (
        share
        if row["win_rate"] <= best
        else f"{share} (CI {row['ci_low'] / best:.0%}–{row['ci_high'] / best:.0%})"
    )


def markdown(result: dict[str, Any], per_seed: bool = True) -> str:
    """Every row, then each learned kind over its seeds (``per_seed=False``: that summary only)."""
    from quadrat_env.experiments.seed_rows import learned_summary

    head = ("| env | agent | deals | win rate | 95% CI (Wilson) | of the exact optimum | mean cards left "
            "| illegal-action rate | seconds |\n|---|---|---:|---:|---|---:|---:|---:|---:|")  # fmt: skip
    lines, optimum = [head], exact_optima(result)
    rows = [r for r in result["rows"] if per_seed or "train_seed" not in r]
    for i, r in enumerate(rows):
        name = learned_label(r["agent"], r.get("learned_from")) if "algo" in r else r["agent"]
        name = f"bound: {name}" if "stock" in name else name  # sees the stock: no player
        agent = name + (f" (train seed {r['train_seed']})" if "train_seed" in r else "")
        cards = "–" if r["mean_cards_left"] is None else f"{r['mean_cards_left']:.2f}"
        best = optimum.get(r["env_id"])
        share = _share(r, best)
        lines.append(f"| {env_name(r['env_id'])} | {agent} | {r['episodes']} | {r['win_rate']:.2%} | "
                     f"[{r['ci_low']:.2%}, {r['ci_high']:.2%}] | {share} | {cards} | {r['illegal_rate']:.2%} "
                     f"| {r['seconds']:.1f} |")  # fmt: skip
        if best is not None and (i + 1 == len(rows) or rows[i + 1]["env_id"] != r["env_id"]):
            name = env_name(r["env_id"])
            lines.append(
                f"| {name} | exact optimum (agents.zudecken.exact) | – | {best:.2%} | – | 100% | – | – | – |"
            )
    for r in (r for r in rows if r["agent"] == "planner" and r.get("decisions")):  # the run's own time
        lines += ["", f"The planner took {1000 * r['seconds'] / r['decisions']:.1f} ms a decision on "
                      f"{env_name(r['env_id'])} in this run ({r['decisions']:,} decisions)."]  # fmt: skip
    lines += ["", "| env | learned agent | learned from | training seeds | IQM | 95% bootstrap CI "
              "| mean win rate | std | min–max | illegal rate |",
              "|---|---|---|---:|---:|---|---:|---:|---|---:|"]  # fmt: skip
    for s in learned_summary(result["rows"]):  # from the rows: an earlier run's file reads the same
        how = s.get("learned_from") or learned_from(MODELS, s["env_id"], s["algo"], 0)
        ci = "[{:.2%}, {:.2%}]".format(*s["iqm_ci"]) if s["seeds"] > 1 else "–"  # one seed: none over seeds
        lines.append(f"| {env_name(s['env_id'])} | {learned_label(s['algo'], how)} | {how} | {s['seeds']} | "
                     f"{s['iqm_win_rate']:.2%} | {ci} | {s['mean_win_rate']:.2%} | "
                     f"{s['std_win_rate']:.2%} | {s['min_win_rate']:.2%}–{s['max_win_rate']:.2%} | "
                     f"{s['mean_illegal_rate']:.2%} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def training_table(models: Path) -> str:
    """How each published model was trained: steps, wall time and speed (from its run folder)."""
    import yaml
    from quadrat_env.agents.networks import extractor  # torch: only for the training table
    from quadrat_env.experiments.common.runs import network_name

    lines = ["| model | training seed | method | steps or labelled decisions | seconds | steps/s |",
             "|---|---:|---|---:|---:|---:|"]  # fmt: skip
    for cfg_path in data_files(models / "configs", "*-seed*.yml"):
        cfg = yaml.safe_load(cfg_path.read_text())
        stem = cfg_path.stem.rsplit("-seed", 1)[0]
        summary = cfg_path.with_name(f"{cfg_path.stem}-summary.json")
        rounds = cfg_path.with_name(f"{cfg_path.stem}-rounds.json")
        if summary.is_file():
            info = json.loads(summary.read_text())  # train's summary counts steps, td's moves
            steps = info.get("steps", info.get("moves"))
            speed = info.get("steps_per_second", info.get("moves_per_second"))
            details = ["dense reward" if dense_reward(cfg) else "", network_name(info),
                       f"ent_coef {cfg['ent_coef']}" if "ent_coef" in cfg else "",  # PPO: 0.01 or 0.05
                       f"on {info['device']}" if "device" in info else ""]  # fmt: skip
            method = ", ".join(
                [str(cfg.get("method", "RL")), *filter(None, details), f"{cfg['n_envs']} envs"]
            )
            lines.append(
                f"| {stem} | {cfg['seed']} | {method} | {steps:,} | {info['seconds']:.0f} | {speed:,} |"
            )
        elif rounds.is_file():
            last = json.loads(rounds.read_text())[-1]
            method = (f"imitation, {cfg['rounds']} round(s) x {cfg['deals_per_round']:,} deals, "
                      f"{cfg['epochs']} epochs, features: {cfg.get('features', 'none')}")  # fmt: skip
            features = cfg.get("features", "none")
            defaults = {} if features == "none" else getattr(extractor(features), "kwarg_defaults", {})
            method += "".join(f", {cfg[k]} {k}" for k, v in defaults.items() if cfg.get(k, v) != v)
            if cfg.get("loss", "bce") != "bce":
                method += f", loss: {cfg['loss']}"
            lines.append(f"| {stem} | {cfg['seed']} | {method} | {last['samples']:,} | "
                         f"{last['seconds']:.0f} | – |")  # fmt: skip
    return "\n".join(lines) + "\n"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description_of(__doc__))
    p.add_argument("--deals", type=int, default=1000, help="held-out deals per env and agent")
    p.add_argument("--planner-deals", type=int, default=100, help="deals for the (slow) planner; 0: skip")
    p.add_argument("--planner-samples", type=int, default=SAMPLES,
                   help=f"samples per decision at most (default {SAMPLES}; fewer once settled)")  # fmt: skip
    p.add_argument("--solver-deals", type=int, help="deals for the solver bound (default: --deals)")
    p.add_argument("--env", action="append", choices=env_ids(), help="only these env IDs")
    p.add_argument("--models", type=Path, default=MODELS)
    p.add_argument("--out", type=Path,
                   help="the run folder (default: runs/benchmark/<date-time>, a new one each run); the "
                        "committed reference tables are results/ (--out results)")  # fmt: skip
    p.add_argument("--jobs", type=int, default=1, help="envs evaluated in parallel processes")
    add_ray_argument(p)
    p.add_argument("--update-docs", action="store_true",
                   help=f"the tables into {PAGE}, the headline into {README} (repository root)")  # fmt: skip
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--tables-only", action="store_true",
                   help="play nothing: write the tables and plots (with --update-docs the docs' and "
                        "README's too) again from --out's benchmark.json")  # fmt: skip
    return p


def _check(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Every argument checked before any work (a bad one: one line, exit 2)."""
    check_ray_argument(p, args)
    args.solver_deals = args.solver_deals or args.deals
    if min(args.deals, args.solver_deals, args.planner_samples, args.jobs) < 1 or args.planner_deals < 0:
        p.error("--deals, --solver-deals, --planner-samples and --jobs must be >= 1, --planner-deals >= 0")
    if args.update_docs and args.env and set(args.env) != set(env_ids(rungs=False)):
        p.error("--update-docs rewrites the table of every game: run it without --env")
    if args.update_docs:
        docs_page(p, PAGE), docs_page(p, README)
    if not args.models.is_dir():
        p.error(f"--models {args.models} is not a folder")
    if args.tables_only and (args.out is None or not (args.out / "benchmark.json").is_file()):
        p.error("--tables-only rewrites the tables of an earlier run: --out must name its folder, with its "
                "benchmark.json")  # fmt: skip


@command
def main(argv: list[str] | None = None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    _check(p, args)
    import stable_baselines3  # noqa: F401  (the 'train' extra: if missing, one line before any folder is made)

    if args.out is None:  # a new folder each run: the committed results/ change only when asked
        args.out = Path("runs") / "benchmark" / time.strftime("%Y%m%d-%H%M%S")
    try:
        with exclusive_folder(args.out):  # a second benchmark into the same folder is refused
            return _run(args, argv)
    except FolderBusy as err:
        print(f"benchmark: error: {err}", file=sys.stderr)
        return 2


#: The journal of the benchmark's last writes (``quadrat_env.journal.replace_all``), in the folder
#: it writes to (the repository root with --update-docs); the next benchmark finishes a stopped one.
JOURNAL = ".benchmark-journal.json"


def _plots(args: argparse.Namespace, result: dict[str, Any]) -> dict[Path, bytes]:
    """The PNG plots, drawn into a scratch folder: they join the run's other files in one change."""
    if args.no_plots:
        return {}
    import tempfile

    from quadrat_env.experiments.common.plots import learning_curves, win_rates

    with tempfile.TemporaryDirectory() as scratch:
        win_rates(result, Path(scratch) / "win_rates.png", exact_optima(result))
        optimum = {env_name(env_id): value for env_id, value in exact_optima(result).items()}
        learning_curves(args.models, Path(scratch) / "learning_curves.png", optimum)
        studies.figures(result, Path(scratch))  # the Zudecken study's share of the optimum, ...
        return {args.out / p.name: p.read_bytes() for p in Path(scratch).glob("*.png")}


def _run(args: argparse.Namespace, argv: list[str] | None) -> int:
    start = time.perf_counter()
    journal = (Path(".") if args.update_docs else args.out) / JOURNAL
    try:  # a damaged or forged journal is found before any deal is played, not after
        read_journal(journal)
    except JournalError as err:
        print(f"benchmark: error: {err}", file=sys.stderr)
        return 2
    try:
        result = json.loads((args.out / "benchmark.json").read_text()) if args.tables_only else run(args)
    except WorkerFailed as err:
        print(f"benchmark: {err}", file=sys.stderr)
        return 1
    table = markdown(result) + "\nTraining of the published models (2-core machine):\n\n"
    table += training_table(args.models)
    changes = {args.out / "benchmark.md": table.encode(), **_plots(args, result)}  # drawn from the result
    if not args.tables_only:  # the measurement itself
        changes[args.out / "benchmark.json"] = json.dumps(result, indent=2).encode()
    if args.update_docs:
        how = "python -m quadrat_env.experiments.benchmark " + " ".join(argv or sys.argv[1:])
        if args.tables_only:  # the figures are the earlier run's: its command stays named
            how = generated_by(PAGE.read_text(encoding="utf-8"), MARKERS) or how
        short = (
            markdown(result, per_seed=False)
            + f"\nEvery training seed's row: `{args.out / 'benchmark.md'}`.\n"
        )
        page = updated_page(PAGE.read_text(encoding="utf-8"), short, how, MARKERS, PAGE)
        for markers, text in studies.page_sections(result):  # the Zudecken table, ...
            page = updated_page(page, text, how, markers, PAGE)
        changes[PAGE] = page.encode()
        readme = README.read_text(encoding="utf-8")
        for markers, text in studies.readme_sections(result):  # the Zudecken headline, ...
            readme = updated_page(readme, text, how, markers, README)
        changes[README] = readme.encode()
    # tables, plots, the docs page and the README as one change: a stop leaves all old or all new
    replace_all(changes, journal)
    wrote = sorted(str(path) for path in changes)
    print("\n" + table + f"\nwrote {', '.join(wrote)} in {time.perf_counter() - start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
