"""A training grid: every env x algorithm x seed, as worker processes or Ray tasks.

    python -m quadrat_env.experiments.grid --envs Quadrat Quadrille --algos maskable_ppo ppo --seeds 0 1 2
    python -m quadrat_env.experiments.grid ... --ray                 # a local Ray instance, --jobs CPUs
    python -m quadrat_env.experiments.grid ... --ray auto            # the Ray cluster this node belongs to

Each run is ``quadrat_env.experiments.train.train`` with the YAML entry of its env and algorithm
(``--timesteps`` overrides them all), on one torch thread, so the weights do not depend on where it
ran. A worker returns the run folder's files (config, model, Monitor logs, curve, summary), and
this process writes them under ``--out`` as ``train`` would: ``<out>/<algo>/<Name>-seed<k>``. So a
cluster needs no shared disk. A summary table ends the run; ``--publish`` then copies the runs into
``experiments/models/`` (``quadrat_env.experiments.publish``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from quadrat_env.experiments.common.parallel import (
    WorkerFailed,
    add_ray_argument,
    check_ray_argument,
    run_tasks,
)

from quadrat_env import seeds
from quadrat_env.arguments import at_least, description_of
from quadrat_env.extras import command, importing
from quadrat_env.files import atomic_write
from quadrat_env.registry import short_name, short_names

with importing(__name__):  # the 'train' extra: one line naming it, not a traceback, if missing
    from quadrat_env.experiments.train import ALGOS, load_hyperparams


def config_for(env_id: str, algo: str, seed: int, timesteps: int | None = None,
               n_envs: int | None = None) -> dict[str, Any]:  # fmt: skip
    hp = load_hyperparams(algo, env_id)
    if timesteps is not None:
        hp["n_timesteps"] = timesteps
    if n_envs is not None:  # a smaller rollout: the batch must fit in it
        hp["n_envs"] = n_envs
        hp["batch_size"] = min(int(hp.get("batch_size", 64)), n_envs * int(hp.get("n_steps", 2048)))
    seeds.rl_training(seed, int(hp["n_envs"]))  # refuses seeds that reach other deals
    return {"env_id": env_id, "algo": algo, "seed": seed, **hp}


def run_one(config: dict[str, Any]) -> dict[str, Any]:
    """Train one run in a scratch folder; return its summary and files (path -> bytes)."""
    from quadrat_env.experiments.train import Settings, train

    import quadrat_env  # noqa: F401  (registers the IDs in a fresh worker)

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        summary = train(Settings.from_config(config), folder, progress=False, threads=1)
        files = {str(f.relative_to(folder)): f.read_bytes() for f in sorted(folder.rglob("*")) if f.is_file()}
    return {"summary": summary, "files": files}


def describe(config: dict[str, Any]) -> str:
    return f"training {config['algo']} on {config['env_id']} (seed {config['seed']})"


def run_dir(out: Path, config: dict[str, Any]) -> Path:
    return out / config["algo"] / f"{short_name(config['env_id'])}-seed{config['seed']}"


@command
def main(argv: list[str] | None = None) -> int:
    names = short_names()
    p = argparse.ArgumentParser(description=description_of(__doc__))
    p.add_argument("--envs", nargs="+", required=True, help=f"games: {sorted(names)} or full IDs")
    p.add_argument("--algos", nargs="+", choices=ALGOS, default=list(ALGOS))
    p.add_argument("--seeds", nargs="+", type=at_least(0), default=[0, 1, 2])
    p.add_argument("--timesteps", type=at_least(1), help="override n_timesteps of every run")
    p.add_argument("--n-envs", type=at_least(1), help="override n_envs of every run (and cap batch_size)")
    p.add_argument("--jobs", type=at_least(1), default=2, help="runs at once (local processes or Ray CPUs)")
    p.add_argument("--out", type=Path, default=Path("runs"))
    p.add_argument("--publish", action="store_true", help="copy the finished runs into experiments/models/")
    add_ray_argument(p)
    args = p.parse_args(argv)
    check_ray_argument(p, args)
    env_ids = []
    for env in args.envs:
        env_id = names.get(env, env)
        if env_id not in names.values():
            p.error(f"unknown env {env!r}; choose from {sorted(names)}")
        env_ids.append(env_id)
    try:
        configs = [config_for(env_id, algo, seed, args.timesteps, args.n_envs)
                   for env_id in env_ids for algo in args.algos for seed in args.seeds]  # fmt: skip
    except ValueError as err:
        p.error(str(err))
    return run_grid(configs, args.out, args.jobs, args.ray, args.publish)


def run_grid(configs: list[dict[str, Any]], out: Path, jobs: int, ray: str | None, publish: bool) -> int:
    from tqdm.auto import tqdm

    start, rows = time.perf_counter(), []
    try:
        with tqdm(total=len(configs), unit="run", desc="training grid", disable=None) as bar:
            for config, result in zip(configs, run_tasks(run_one, configs, jobs, describe, ray), strict=True):
                folder = run_dir(out, config)
                for name, data in result["files"].items():
                    (folder / name).parent.mkdir(parents=True, exist_ok=True)
                    atomic_write(folder / name, data)
                rows.append((config, folder, result["summary"]))
                bar.update()
    except WorkerFailed as err:
        print(f"grid: {err}", file=sys.stderr)
        return 1
    for config, folder, summary in rows:
        print(f"{config['algo']:>12} {short_name(config['env_id']):>10} seed {config['seed']}: "
              f"{summary['steps']:,} steps in {summary['seconds']}s -> {folder}")  # fmt: skip
    print(f"{len(rows)} runs in {time.perf_counter() - start:.0f}s")
    atomic_write(out / "grid.json", json.dumps([{"run": str(f), **s} for _, f, s in rows], indent=2))
    if publish:
        from quadrat_env.experiments.publish import publish as publish_run

        for _, folder, _ in rows:
            print(f"{folder} -> {publish_run(folder)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
