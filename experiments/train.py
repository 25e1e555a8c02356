"""Train PPO or MaskablePPO on a registered env, with hyperparameters from YAML keyed by env ID.

    python -m quadrat_env.experiments.train --env quadrat_env/Zudecken-v0 --algo maskable_ppo --seed 0

Each run gets a folder (default ``runs/<algo>/<Name>-seed<k>``) holding the resolved config
(``config.yml``), Monitor logs (``monitor/``), TensorBoard logs (``tb/``) and the model
(``model.zip``). SB3's progress bar shows while it trains; a summary line ends the run.

A folder that holds an earlier run is refused unless ``--overwrite`` (start again) or ``--resume``
(continue it, with the same arguments). The run checkpoints to ``checkpoint.npz`` every
``--checkpoint-minutes`` (default 10) at a rollout boundary; Ctrl-C or SIGTERM checkpoints at the next
one and exits 130 / 143. A resumed run ends with the weights an uninterrupted one would have.

``--eval-every STEPS`` plays ``--eval-deals`` validation deals (never the benchmark's) deterministically
every STEPS steps and appends the win rate with its Wilson interval to ``curve.csv``: the learning
curve. The YAML key ``features`` names the policy's features extractor (``features: zudecken``:
``quadrat_env.agents.zudecken.features.ZudeckenFeatures``); only the names studies register
(``quadrat_env.agents.networks.names``), nothing is imported by name from the YAML.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from quadrat_env.agents.networks import actor_critic_kwargs, pass_scores_through
from quadrat_env.experiments.common import checkpoint
from quadrat_env.experiments.common.starting import load_start, start_kwargs

from quadrat_env import seeds
from quadrat_env.arguments import description_of, env_arg
from quadrat_env.extras import command, importing
from quadrat_env.files import atomic_write, finish_run, save_model
from quadrat_env.registry import short_name as env_name

with importing(__name__):  # the 'train' extra: one line naming it, not a traceback, if missing
    import yaml
    from quadrat_env.experiments.common.runs import on_stop_signals, open_run_dir, read_yaml

ALGOS = ("ppo", "maskable_ppo")
HYPERPARAMS = Path(__file__).parent / "hyperparams"
VEC_ENVS = ("dummy", "native")


def load_hyperparams(algo: str, env_id: str, path: Path | None = None) -> dict[str, Any]:
    path = path or HYPERPARAMS / f"{algo}.yml"
    table = read_yaml(path, "hyperparameters")
    if not isinstance(table, dict) or env_id not in table:
        raise ValueError(f"{path} has no entry for {env_id!r}")
    return dict(table[env_id])


@dataclass
class Settings:
    """One training run, typed: the run's own settings, and the algorithm's keyword arguments
    (``algo_kwargs``: everything else the YAML entry gives, passed to SB3 as they are). The run
    folder's ``config.yml`` is ``config``, flat and in the YAML's order, as rl-zoo3 writes it."""

    env_id: str
    algo: str
    seed: int
    n_timesteps: int
    n_envs: int
    policy: str = "MlpPolicy"
    #: "dummy": SB3's DummyVecEnv over gym.make envs; "native": the batched env (quadrat_env.sb3).
    vec_env: str = "dummy"
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    #: A features extractor by name (``agents.networks.names()``); the policy sees the mask (plain PPO).
    features: str | None = None
    observe_mask: bool = False
    #: Start from this saved model's policy, its action head scaled by ``init_logit_scale``.
    init: str | None = None
    init_logit_scale: float = 1.0
    #: A learning curve: ``eval_deals`` validation deals every ``eval_every`` steps.
    eval_every: int | None = None
    eval_deals: int = 2000
    algo_kwargs: dict[str, Any] = field(default_factory=dict)
    #: The flat config's keys in their order (what ``config`` writes back).
    keys: tuple[str, ...] = field(default=(), repr=False, compare=False)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Settings:
        """The settings of a flat config (``env_id``, ``algo``, ``seed`` and a YAML entry's keys)."""
        own = {f.name for f in fields(cls)} - {"algo_kwargs", "keys"}
        missing = [k for k in ("env_id", "algo", "seed", "n_timesteps", "n_envs") if k not in config]
        if missing:
            raise ValueError(f"the config lacks {', '.join(missing)}")
        algo_kwargs = {k: v for k, v in config.items() if k not in own}
        settings = cls(**{k: v for k, v in config.items() if k in own}, algo_kwargs=algo_kwargs,
                       keys=tuple(config))  # fmt: skip
        settings.check()
        return settings

    def check(self) -> None:
        scale = self.init_logit_scale
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale > 0:
            raise ValueError(f"init_logit_scale must be a number > 0, got {scale!r}")
        if self.vec_env not in VEC_ENVS:
            raise ValueError(f"vec_env must be one of {list(VEC_ENVS)}, got {self.vec_env!r}")
        for name in ("n_timesteps", "n_envs"):
            if isinstance(getattr(self, name), bool) or not isinstance(getattr(self, name), int):
                raise ValueError(f"{name} must be a whole number, got {getattr(self, name)!r}")

    def config(self) -> dict[str, Any]:
        values = {**asdict(self), **self.algo_kwargs}
        return {k: values[k] for k in self.keys}


def resolve(args: argparse.Namespace) -> Settings:
    """The settings of a run: its YAML entry, then the command line's overrides."""
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
    return Settings.from_config({"env_id": args.env, "algo": args.algo, "seed": args.seed, **hp})


def train(settings: Settings, run_dir: Path, progress: bool = True, threads: int | None = None,
          resume: bool = False, checkpoint_minutes: float = 10.0) -> dict[str, Any]:  # fmt: skip
    """Train (or with ``resume``, continue from ``run_dir/checkpoint.npz``). Returns the summary, or
    ``{"interrupted": signal number, "steps": ...}`` when SIGINT or SIGTERM stopped it at a checkpoint."""
    import torch

    # small batches: one thread beats two fighting over 2 cores; big batches gain from every core
    # (Zudecken MaskablePPO, 1,024 envs x 16, batch 4,096: 18k steps/s on one thread, 24k on two)
    if threads is None:
        threads = 1 if int(settings.algo_kwargs.get("batch_size", 64)) < 2048 else (os.cpu_count() or 1)
    torch.set_num_threads(threads)
    run_dir.mkdir(parents=True, exist_ok=True)
    if not resume:
        atomic_write(run_dir / "config.yml", yaml.safe_dump(settings.config(), sort_keys=False))
    # closed at the end, its Monitor logs with it, not whenever the garbage collector comes by
    with contextlib.closing(_make_venv(settings, run_dir)) as venv:
        curve = None
        if settings.eval_every:
            from quadrat_env.experiments.common.curve import CurveCallback

            curve = CurveCallback(settings, run_dir / "curve.csv", write=not resume)
        keeper = Checkpointer(run_dir / CHECKPOINT, checkpoint_minutes, [curve] if curve else [], run_dir)
        model = _resumed_model(settings, venv, keeper) if resume else _new_model(settings, venv, run_dir)
        keeper.start = time.perf_counter()
        from stable_baselines3.common.callbacks import CallbackList

        with keeper.stop_on_signals():
            callbacks = CallbackList([keeper.callback, *keeper.others])
            model.learn(total_timesteps=settings.n_timesteps - model.num_timesteps, progress_bar=progress,
                        callback=callbacks, reset_num_timesteps=not resume)  # fmt: skip
        if keeper.signal:
            return {"interrupted": keeper.signal, "steps": keeper.saved_at}
        seconds = keeper.elapsed()  # the whole run's, over every resumed part
        save_model(model, run_dir / "model.zip")
        steps = settings.n_timesteps
        summary = {"seconds": round(seconds, 1), "steps": steps, "steps_per_second": round(steps / seconds)}
        atomic_write(run_dir / "summary.json", json.dumps(summary, indent=2))
        finish_run(run_dir, CHECKPOINT)  # whole (no half-written copies): model.zip and summary.json
        return summary


CHECKPOINT = "checkpoint.npz"


class Checkpointer:
    """An SB3 callback that checkpoints the run at rollout boundaries (after an update, before the
    next rollout: nothing half-collected) every ``minutes`` (0: at every boundary), and on SIGINT or
    SIGTERM checkpoints at the next boundary and stops the run (a second signal acts at once)."""

    def __init__(self, path: Path, minutes: float, others: list[Any], run_dir: Path) -> None:
        from stable_baselines3.common.callbacks import BaseCallback

        # built here so that the module imports without SB3 (the train extra)
        class _Callback(BaseCallback):
            def _on_rollout_start(inner) -> None:  # noqa: N805
                self.at_boundary(inner.model)

            def _on_step(inner) -> bool:  # noqa: N805
                return not self.stopping

        self.callback = _Callback()
        self.path, self.every, self.others, self.run_dir = path, minutes * 60, others, run_dir
        self.last, self.signal, self.saved_at, self.stopping = time.monotonic(), 0, 0, False
        #: Seconds the run took before this process resumed it, and when this process's part began.
        self.seconds_before, self.start = 0.0, time.perf_counter()

    def elapsed(self) -> float:
        return self.seconds_before + time.perf_counter() - self.start

    def at_boundary(self, model: Any) -> None:
        due = time.monotonic() - self.last >= self.every
        if (due or self.signal) and model.num_timesteps > self.saved_at:
            meta, arrays = checkpoint.snapshot(model, self.others, self.run_dir)
            meta["seconds"] = self.elapsed()
            checkpoint.save(self.path, meta, arrays)
            self.last, self.saved_at = time.monotonic(), model.num_timesteps
        self.stopping = bool(self.signal)  # a signal stops the run here, at a checkpoint
        for other in self.others:  # a stopped run's last curve point would not be an uninterrupted run's
            other.final_point = not self.signal

    def stop_on_signals(self) -> contextlib.AbstractContextManager[None]:
        def handle(signum: int, frame: Any) -> None:
            if self.signal:  # the second time: stop now, as without this handler
                signal.signal(signum, signal.SIG_DFL)
                signal.raise_signal(signum)
            self.signal = signum

        return on_stop_signals(handle)


def _make_venv(settings: Settings, run_dir: Path) -> Any:
    """The vec env of a run, its Monitor logs appended to (a resumed run cuts them back first)."""
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.monitor import ResultsWriter

    env_kwargs = {"render_mode": None, **(settings.env_kwargs or {})}
    env_id, n_envs, seed = settings.env_id, settings.n_envs, settings.seed
    (run_dir / "monitor").mkdir(exist_ok=True)
    if settings.vec_env == "native":  # the batched numpy env, one process
        from stable_baselines3.common.vec_env import VecMonitor

        from quadrat_env.sb3 import make_sb3_vec_env

        venv = VecMonitor(make_sb3_vec_env(env_id, n_envs, seed, **env_kwargs), info_keywords=("won",))
        path = run_dir / "monitor" / "0.monitor.csv"
        header = {"t_start": venv.t_start, "env_id": env_id}
        venv.results_writer = ResultsWriter(str(path), header=header, extra_keys=("won",),
                                            override_existing=not path.exists())  # fmt: skip
    else:  # SB3's DummyVecEnv over gym.make envs, each with its Monitor
        fresh = not any((run_dir / "monitor").iterdir())
        monitor = {"info_keywords": ("won",), "override_existing": fresh}
        venv = make_vec_env(env_id, n_envs=n_envs, seed=seed, env_kwargs=env_kwargs,
                            monitor_dir=str(run_dir / "monitor"), monitor_kwargs=monitor)  # fmt: skip
    if settings.observe_mask:  # the policy sees the legal actions as input (plain PPO)
        from quadrat_env.sb3 import VecMaskObservation

        venv = VecMaskObservation(venv)
    return venv


def _new_model(settings: Settings, venv: Any, run_dir: Path) -> Any:
    from quadrat_env.agents.safe_load import algorithm, load_model

    algo_kwargs = {**settings.algo_kwargs, "policy_kwargs": _policy_kwargs(settings)}
    # the starting model is loaded without unpickling anything from it (quadrat_env.agents.safe_load)
    init = load_model(settings.init, settings.algo, settings.env_id) if settings.init else None
    if init is not None:  # continue from a saved model: its network shape (a critic may change), its weights
        algo_kwargs["policy_kwargs"] = start_kwargs(
            init.policy_kwargs, settings.algo_kwargs.get("policy_kwargs")
        )
    cls = algorithm(settings.algo)
    model = cls(settings.policy, venv, seed=settings.seed, device="cpu", tensorboard_log=str(run_dir / "tb"),
                verbose=0, **algo_kwargs)  # fmt: skip
    if init is not None:
        load_start(model.policy, init.policy)
        _scale_logits(model.policy, float(settings.init_logit_scale))
    pass_scores_through(model.policy, fresh=init is None)
    return model


def _resumed_model(settings: Settings, venv: Any, keeper: Checkpointer) -> Any:
    """The model, envs, callbacks and random generators as they were at the last checkpoint."""
    from quadrat_env.agents.safe_load import load_model

    meta, arrays = checkpoint.load(keeper.path)
    rollout = settings.n_envs * int(settings.algo_kwargs.get("n_steps", 2048))  # PPO's default
    checkpoint.check_snapshot(meta, keeper.path, keeper.run_dir, settings.n_timesteps + rollout)
    for name, size in meta["monitor_sizes"].items():  # episodes logged after the checkpoint go
        with open(keeper.run_dir / "monitor" / name, "r+b") as f:  # noqa: SIM115 - cut back in place
            f.truncate(size)
    with tempfile.TemporaryDirectory(dir=keeper.run_dir) as folder:
        path = Path(folder) / "model.zip"
        atomic_write(path, arrays["model"].tobytes())  # a scratch copy for the safe loader
        model = load_model(path, settings.algo, settings.env_id)  # no unpickling
    model.set_env(venv, force_reset=False)
    model.tensorboard_log = str(keeper.run_dir / "tb")
    checkpoint.restore(model, meta["model"], arrays)
    pass_scores_through(model.policy, fresh=False)
    for obj, state in zip(checkpoint.env_objects(venv), meta["env"], strict=True):
        checkpoint.restore(obj, state, arrays)
    for cb, state in zip(keeper.others, meta["callbacks"], strict=True):
        checkpoint.restore(cb, state, arrays)
    checkpoint.set_global_rngs(meta["rng"], arrays)
    keeper.saved_at, keeper.seconds_before = meta["num_timesteps"], float(meta.get("seconds", 0.0))
    for cb in keeper.others:  # the curve's clock counts the run so far, not this process's part
        cb.start = time.perf_counter() - keeper.seconds_before
    # and each Monitor log's time column goes on from where it stood (a Monitor starts its clock
    # before the run's: checkpoints of before the clocks were kept fall back on the run's)
    clocks = iter(meta.get("monitor_clocks", []))
    for obj in checkpoint.env_objects(venv):
        if hasattr(obj, "t_start"):
            obj.t_start = time.time() - next(clocks, keeper.seconds_before)
    return model


def _scale_logits(policy: Any, scale: float) -> None:
    """Multiply the action head by ``scale``: the same argmax, a sharper softmax. Imitation models
    (experiments/zudecken/imitate.py) learned each move's logit as P(move wins) by binary cross-entropy, so
    their softmax is close to uniform among the good moves; PPO samples from it, and would start
    from a much weaker policy than the argmax it is meant to refine."""
    import torch

    with torch.no_grad():
        policy.action_net.weight.mul_(scale)
        policy.action_net.bias.mul_(scale)


def _policy_kwargs(settings: Settings) -> dict[str, Any]:
    return actor_critic_kwargs(settings.features, settings.algo_kwargs.get("policy_kwargs"))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description_of(__doc__))
    p.add_argument("--env", required=True, type=env_arg, help="env ID or short name (Zudecken32, ...)")
    p.add_argument("--algo", required=True, choices=ALGOS)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timesteps", type=int, help="override n_timesteps from the YAML")
    p.add_argument("--n-envs", type=int, help="override n_envs from the YAML")
    p.add_argument("--hyperparams", type=Path, help="YAML file (default: experiments/hyperparams/ALGO.yml)")
    p.add_argument("--out", type=Path, default=Path("runs"), help="parent folder of run folders")
    p.add_argument("--init", type=Path, help="start from this saved model's policy (fine-tuning)")
    p.add_argument("--vec-env", choices=VEC_ENVS,
                   help="dummy: SB3's DummyVecEnv over gym.make envs; native: the batched numpy env "
                        "(default: the YAML's vec_env, else dummy)")  # fmt: skip
    p.add_argument("--eval-every", type=int, metavar="STEPS",
                   help="play --eval-deals validation deals every STEPS steps; writes curve.csv")  # fmt: skip
    p.add_argument("--eval-deals", type=int, default=2000, help="deals per curve point (default 2000)")
    again = p.add_mutually_exclusive_group()
    again.add_argument("--overwrite", action="store_true", help="replace an earlier run (kept to the end)")
    again.add_argument("--resume", action="store_true", help="continue the run in the run folder from its "
                       "last checkpoint (same arguments)")  # fmt: skip
    p.add_argument("--checkpoint-minutes", type=float, default=10.0,
                   help="minutes between checkpoints (default 10; 0: after every update)")  # fmt: skip
    p.add_argument("--no-progress", action="store_true")
    return p


def _checked(
    p: argparse.ArgumentParser, args: argparse.Namespace, held: contextlib.ExitStack
) -> tuple[Settings, Path]:
    """The run's settings and folder (held by this run in ``held``), every check done before any work."""
    if not args.checkpoint_minutes >= 0:
        p.error(f"--checkpoint-minutes must be >= 0, got {args.checkpoint_minutes}")
    for name in ("timesteps", "n_envs", "eval_every", "eval_deals"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    try:
        settings = resolve(args)
        _policy_kwargs(settings)  # a bad features name fails here, before any training
        seeds.rl_training(args.seed, settings.n_envs)  # refuses seeds that reach other deals
        run_dir = args.out / args.algo / f"{env_name(args.env)}-seed{args.seed}"
        open_run_dir(run_dir, settings.config(), CHECKPOINT, args.resume, args.overwrite, held)
    except ValueError as err:
        p.error(str(err))
    return settings, run_dir


@command
def main(argv: list[str] | None = None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    with contextlib.ExitStack() as held:  # the run folder, held until the run ends
        settings, run_dir = _checked(p, args, held)
        try:
            summary = train(settings, run_dir, progress=not args.no_progress, resume=args.resume,
                            checkpoint_minutes=args.checkpoint_minutes)  # fmt: skip
        except checkpoint.CheckpointError as err:  # --resume: damaged, or of other settings
            p.error(str(err))
    if "interrupted" in summary:
        sig = summary["interrupted"]
        how = (f"checkpoint in {run_dir / CHECKPOINT}; continue with the same command and --resume" if
               summary["steps"] else "before its first update; start it again with --overwrite")  # fmt: skip
        print(
            f"train: stopped by {signal.Signals(sig).name} at step {summary['steps']:,}, {how}",
            file=sys.stderr,
        )
        return 128 + sig
    print(f"{args.algo} on {args.env}, seed {args.seed}: {summary['steps']} steps in "
          f"{summary['seconds']}s ({summary['steps_per_second']} steps/s) -> {run_dir}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
