"""Train PPO or MaskablePPO on a registered env, with hyperparameters from YAML keyed by env ID.

    python -m quadrat_env.experiments.train --env quadrat_env/Zudecken-v0 --algo maskable_ppo --seed 0

Each run gets a folder (default ``runs/<algo>/<Name>-seed<k>``) holding the resolved config
(``config.yml``), Monitor logs (``monitor/``), TensorBoard logs (``tb/``) and the model
(``model.zip``). SB3's progress bar shows while it trains; a summary line ends the run.

``--eval-every STEPS`` plays ``--eval-deals`` validation deals (never the benchmark's) deterministically
every STEPS steps and appends the win rate with its Wilson interval to ``curve.csv``: the learning
curve. The YAML key ``features: zudecken`` gives the policy
:class:`quadrat_env.agents.features.ZudeckenFeatures` (``zudecken-moves``: ``ZudeckenMoveFeatures``;
only names from ``agents.features.NAMES``, nothing is imported by name from the YAML).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import yaml
from quadrat_env.experiments.runs import claim_run_dir

from quadrat_env import seeds
from quadrat_env.files import atomic_write, save_model
from quadrat_env.registry import env_ids
from quadrat_env.registry import short_name as env_name

ALGOS = ("ppo", "maskable_ppo")
HYPERPARAMS = Path(__file__).parent / "hyperparams"
EVAL_KEYS = ("eval_every", "eval_deals")
RUN_KEYS = ("n_timesteps", "n_envs", "env_kwargs", "policy", "init", "init_logit_scale", "vec_env",
            "observe_mask", "features")
VEC_ENVS = ("dummy", "native")


def load_hyperparams(algo: str, env_id: str, path: Path | None = None) -> dict[str, Any]:
    path = path or HYPERPARAMS / f"{algo}.yml"
    try:
        table = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise ValueError(f"cannot read hyperparameters from {path}: {err}") from None
    if not isinstance(table, dict) or env_id not in table:
        raise ValueError(f"{path} has no entry for {env_id!r}")
    return dict(table[env_id])


def resolve(args: argparse.Namespace) -> dict[str, Any]:
    """The full config of a run: YAML entry, then command-line overrides."""
    hp = load_hyperparams(args.algo, args.env, args.hyperparams)
    if args.timesteps is not None:
        hp["n_timesteps"] = args.timesteps
    if args.n_envs is not None:
        hp["n_envs"] = args.n_envs
    if args.vec_env is not None:
        hp["vec_env"] = args.vec_env
    if args.eval_every is not None:
        hp["eval_every"], hp["eval_deals"] = args.eval_every, args.eval_deals
    if args.init is not None:
        if not args.init.is_file():
            raise ValueError(f"--init {args.init}: no such model file")
        hp["init"] = str(args.init)
    scale = hp.get("init_logit_scale", 1.0)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale > 0:
        raise ValueError(f"init_logit_scale must be a number > 0, got {scale!r}")
    return {"env_id": args.env, "algo": args.algo, "seed": args.seed, **hp}


def train(config: dict[str, Any], run_dir: Path, progress: bool = True,
          threads: int | None = None) -> dict[str, Any]:  # fmt: skip
    import torch
    from quadrat_env.agents.safe_load import load_model
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    # small batches: one thread beats two fighting over 2 cores; big batches gain from every core
    # (Zudecken MaskablePPO, 1,024 envs x 16, batch 4,096: 18k steps/s on one thread, 24k on two)
    if threads is None:
        threads = 1 if int(config.get("batch_size", 64)) < 2048 else (os.cpu_count() or 1)
    torch.set_num_threads(threads)
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(run_dir / "config.yml", yaml.safe_dump(config, sort_keys=False))
    env_kwargs = {"render_mode": None, **(config.get("env_kwargs") or {})}
    if config.get("vec_env", "dummy") == "native":  # the batched numpy env, one process
        from stable_baselines3.common.vec_env import VecMonitor

        from quadrat_env.sb3 import make_sb3_vec_env

        (run_dir / "monitor").mkdir(exist_ok=True)
        venv = VecMonitor(make_sb3_vec_env(config["env_id"], config["n_envs"], config["seed"], **env_kwargs),
                          str(run_dir / "monitor" / "0"), info_keywords=("won",))  # fmt: skip
    else:  # SB3's DummyVecEnv over gym.make envs, each with its Monitor
        venv = make_vec_env(config["env_id"], n_envs=config["n_envs"], seed=config["seed"],
                            env_kwargs=env_kwargs, monitor_dir=str(run_dir / "monitor"),
                            monitor_kwargs={"info_keywords": ("won",)})  # fmt: skip
    if config.get("observe_mask"):  # the policy sees the legal actions as input (plain PPO)
        from quadrat_env.sb3 import VecMaskObservation

        venv = VecMaskObservation(venv)
    skip = (*RUN_KEYS, *EVAL_KEYS, "env_id", "algo", "seed")
    algo_kwargs = {k: v for k, v in config.items() if k not in skip}
    algo_kwargs["policy_kwargs"] = _policy_kwargs(config)
    cls = MaskablePPO if config["algo"] == "maskable_ppo" else PPO
    # the starting model is loaded without unpickling anything from it (quadrat_env.agents.safe_load)
    init = load_model(config["init"], config["algo"], config["env_id"]) if config.get("init") else None
    if init is not None:  # continue from a saved model: its network shape, then its weights
        algo_kwargs["policy_kwargs"] = init.policy_kwargs
    model = cls(config.get("policy", "MlpPolicy"), venv, seed=config["seed"], device="cpu",
                tensorboard_log=str(run_dir / "tb"), verbose=0, **algo_kwargs)  # fmt: skip
    if init is not None:
        model.policy.load_state_dict(init.policy.state_dict())
        _scale_logits(model.policy, float(config.get("init_logit_scale", 1.0)))
    start = time.perf_counter()
    callback = None
    if config.get("eval_every"):
        from quadrat_env.experiments.curve import CurveCallback

        callback = CurveCallback(config, run_dir / "curve.csv")
    model.learn(total_timesteps=config["n_timesteps"], progress_bar=progress, callback=callback)
    seconds = time.perf_counter() - start
    save_model(model, run_dir / "model.zip")
    summary = {"seconds": round(seconds, 1), "steps": config["n_timesteps"],
               "steps_per_second": round(config["n_timesteps"] / seconds)}  # fmt: skip
    atomic_write(run_dir / "summary.json", json.dumps(summary, indent=2))
    return summary


def _scale_logits(policy: Any, scale: float) -> None:
    """Multiply the action head by ``scale``: the same argmax, a sharper softmax. Imitation models
    (experiments/imitate.py) learned each move's logit as P(move wins) by binary cross-entropy, so
    their softmax is close to uniform among the good moves; PPO samples from it, and would start
    from a much weaker policy than the argmax it is meant to refine."""
    import torch

    with torch.no_grad():
        policy.action_net.weight.mul_(scale)
        policy.action_net.bias.mul_(scale)


def _policy_kwargs(config: dict[str, Any]) -> dict[str, Any]:
    from quadrat_env.agents.features import policy_kwargs_with

    return policy_kwargs_with(config.get("features"), config.get("policy_kwargs"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", required=True, choices=env_ids())
    p.add_argument("--algo", required=True, choices=ALGOS)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timesteps", type=int, help="override n_timesteps from the YAML")
    p.add_argument("--n-envs", type=int, help="override n_envs from the YAML")
    p.add_argument("--hyperparams", type=Path, help="YAML file (default: experiments/hyperparams/ALGO.yml)")
    p.add_argument("--out", type=Path, default=Path("runs"), help="parent folder of run folders")
    p.add_argument("--init", type=Path, help="start from this saved model's policy (fine-tuning)")
    p.add_argument(
        "--vec-env",
        choices=VEC_ENVS,
        help="dummy: SB3's DummyVecEnv over gym.make envs (default); native: the batched numpy env",
    )
    p.add_argument(
        "--eval-every",
        type=int,
        metavar="STEPS",
        help="play --eval-deals validation deals every STEPS steps; writes curve.csv",
    )
    p.add_argument("--eval-deals", type=int, default=2000, help="deals per curve point (default 2000)")
    p.add_argument("--overwrite", action="store_true", help="delete an earlier run in the run folder first")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    for name in ("timesteps", "n_envs", "eval_every", "eval_deals"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    try:
        config = resolve(args)
        _policy_kwargs(config)  # a bad features name fails here, before any training
        seeds.rl_training(args.seed, int(config["n_envs"]))  # refuses seeds that reach other deals
        run_dir = args.out / args.algo / f"{env_name(args.env)}-seed{args.seed}"
        claim_run_dir(run_dir, args.overwrite)
    except ValueError as err:
        p.error(str(err))
    summary = train(config, run_dir, progress=not args.no_progress)
    print(f"{args.algo} on {args.env}, seed {args.seed}: {summary['steps']} steps in "
          f"{summary['seconds']}s ({summary['steps_per_second']} steps/s) -> {run_dir}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
