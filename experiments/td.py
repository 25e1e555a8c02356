"""Afterstate TD(0) from the reward alone, on the native batched env (Tesauro's TD-Gammon scheme).

    python -m quadrat_env.experiments.td --env quadrat_env/Zudecken32-v0 --seed 0

One network ``V`` scores the afterstate of every legal move (what the table is once the move is
made, before chance deals the next cards); the policy plays the move with the best score. The
learner sees only what the env gives every agent: observations, legal-action masks and the reward
(no solver, no labels, no look at the stock):

* ``n_envs`` deals are played at once on the game's batched env, epsilon-greedy on the scores
  (epsilon falls linearly from ``epsilon_start`` to ``epsilon_end`` over the run);
* the chosen move's afterstate gets the target ``reward`` if the deal ended, else
  ``max V`` over the legal moves of the next decision (a win probability: ``V`` is a logit, trained by
  binary cross-entropy on the chosen afterstates only, Adam, ``batch_size`` afterstates a step).

Any game can use it whose network (a features extractor named in the YAML, ``features``) scores
afterstates: ``scored_moves(obs)`` (which moves it scores), ``afterstates(obs, rows, moves)`` and
``value(afterstates)`` (the logits), and ``forward(obs)`` giving every move's score. The result is an
ordinary MaskablePPO model whose logits are those scores (``model.zip``: loaded by the safe loader,
``quadrat-bench --model``, ``SB3Agent.load``), playing with no search.

Settings come from ``experiments/hyperparams/td.yml`` keyed by env ID; the run folder
(``runs/td/<Name>-seed<k>``) holds ``config.yml``, ``curve.csv`` (validation win rate every
``eval_every`` moves), ``summary.json`` and ``model.zip``. It checkpoints every
``--checkpoint-minutes``; Ctrl-C or SIGTERM checkpoints and stops; ``--resume`` continues to the same
weights an uninterrupted run reaches.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from quadrat_env import seeds
from quadrat_env.arguments import description_of, env_arg
from quadrat_env.extras import command, importing
from quadrat_env.files import atomic_write, finish_run, save_model
from quadrat_env.registry import short_name as env_name

with importing(__name__):  # the 'train' extra: one line naming it, not a traceback, if missing
    import yaml
    from quadrat_env.experiments.common import checkpoint
    from quadrat_env.experiments.common.runs import (
        RunSettings,
        StopAtBoundary,
        check_flags,
        on_stop_signals,
        open_run_dir,
    )
    from quadrat_env.experiments.common.td_learner import FIELDS, Learner

HYPERPARAMS = Path(__file__).parent / "hyperparams" / "td.yml"
CHECKPOINT = "checkpoint.npz"
METHOD = "afterstate TD(0) from the reward"


@dataclass
class TDSettings(RunSettings):
    """What every afterstate TD(0) learner's settings hold (``td``'s and ``td_jax``'s)."""

    env_id: str
    seed: int
    n_moves: int
    #: The afterstate network, by the name its study registers (the game's YAML entry gives it).
    features: str
    n_envs: int = 256
    #: The network's size (the features extractor's keyword arguments).
    features_kwargs: dict[str, Any] = field(default_factory=dict)
    learning_rate: float = 1e-3
    #: The learning rate falls linearly from learning_rate to this over the run.
    learning_rate_end: float = 1e-4
    epsilon_start: float = 0.1
    epsilon_end: float = 0.02
    eval_every: int = 1_000_000
    eval_deals: int = 2000
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    method: str = METHOD

    def __post_init__(self) -> None:
        wholes = {"seed": 0, "n_moves": 1, "n_envs": 1, "eval_every": 1, "eval_deals": 1}
        self.check_numbers(wholes, ("learning_rate", "learning_rate_end", "epsilon_start", "epsilon_end"))
        if self.env_kwargs.get("reward_mode", "sparse") != "sparse":
            raise ValueError("TD learns win probabilities: it needs the sparse reward (reward_mode: sparse)")

    def config(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Settings(TDSettings):
    """One TD run, typed; ``config.yml`` is ``config``."""

    batch_size: int = 512

    def __post_init__(self) -> None:
        super().__post_init__()
        self.check_numbers({"batch_size": 1}, ())
        if self.batch_size > self.n_moves:  # its first batch would never fill: the run would never end
            raise ValueError(f"batch_size {self.batch_size:,} is more than the run's {self.n_moves:,} "
                             "moves (--moves): its first batch would never fill; lower batch_size in the "
                             "YAML")  # fmt: skip

    def env_seeds(self) -> range:
        """This seed's own block of training deals: env i is seeded ``seed * n_envs + i``."""
        return seeds.RL_TRAINING.take(self.n_envs, offset=self.seed * self.n_envs)


def load_settings(env_id: str, seed: int, path: Path | None = None, **overrides: Any) -> Settings:
    return Settings.load(env_id, seed, path or HYPERPARAMS, **overrides)


def run(settings: Settings, run_dir: Path, resume: bool = False, progress: bool = True,
        checkpoint_minutes: float = 10.0) -> dict[str, Any]:  # fmt: skip
    """Train to ``settings.n_moves`` moves (from the checkpoint with ``resume``). Returns the summary,
    or ``{"interrupted": signal number, "moves": ...}`` when a signal stopped it at a checkpoint."""
    run_dir.mkdir(parents=True, exist_ok=True)
    if not resume:
        atomic_write(run_dir / "config.yml", yaml.safe_dump(settings.config(), sort_keys=False))
    learner = Learner(settings)
    if resume:
        learner.restore(*checkpoint.load(run_dir / CHECKPOINT))
    stop, last_save = StopAtBoundary(), time.monotonic()
    with on_stop_signals(stop), learner.progress_bar(progress) as bar:
        while learner.moves < settings.n_moves and not stop.signal:
            if learner.eval_due():
                _write_curve(run_dir, learner.evaluate())
                bar.set_postfix_str(f"validation {learner.curve[-1][3]:.2%}")
            bar.update(learner.play_until_update())
            if time.monotonic() - last_save >= checkpoint_minutes * 60:
                checkpoint.save(run_dir / CHECKPOINT, *learner.snapshot())
                last_save = time.monotonic()
        if stop.signal:
            checkpoint.save(run_dir / CHECKPOINT, *learner.snapshot())
            return {"interrupted": stop.signal, "moves": learner.moves}
        _write_curve(run_dir, learner.evaluate())
        bar.set_postfix_str(
            f"validation {learner.curve[-1][3]:.2%}"
        )  # the bar ends on the last line's figure
    save_model(learner.model, run_dir / "model.zip")
    summary = learner.summary()
    atomic_write(run_dir / "summary.json", json.dumps(summary, indent=2))
    finish_run(run_dir, CHECKPOINT)  # whole (no half-written copies): model.zip and summary.json
    return summary


def _write_curve(run_dir: Path, rows: list[tuple]) -> None:
    atomic_write(run_dir / "curve.csv", "\n".join(",".join(map(str, r)) for r in [FIELDS, *rows]) + "\n")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description_of(__doc__))
    p.add_argument("--env", required=True, type=env_arg, help="env ID or short name (Zudecken32, ...)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--moves", type=int, help="override n_moves from the YAML (moves over all envs)")
    p.add_argument("--n-envs", type=int, help="override n_envs from the YAML")
    p.add_argument("--eval-every", type=int, metavar="MOVES", help="override eval_every from the YAML")
    p.add_argument("--eval-deals", type=int, help="override eval_deals from the YAML")
    p.add_argument("--hyperparams", type=Path, help=f"YAML file (default: {HYPERPARAMS.name} beside train's)")
    p.add_argument("--out", type=Path, default=Path("runs"), help="parent folder of run folders")
    again = p.add_mutually_exclusive_group()
    again.add_argument("--overwrite", action="store_true", help="replace an earlier run (kept to the end)")
    again.add_argument("--resume", action="store_true", help="continue the run from its last checkpoint")
    p.add_argument("--checkpoint-minutes", type=float, default=10.0, help="minutes between checkpoints")
    p.add_argument("--no-progress", action="store_true")
    return p


def _checked(
    p: argparse.ArgumentParser, args: argparse.Namespace, held: contextlib.ExitStack
) -> tuple[Settings, Path]:
    """The run's settings and folder (held by this run in ``held``), every check done before any work."""
    if not args.checkpoint_minutes >= 0:
        p.error(f"--checkpoint-minutes must be >= 0, got {args.checkpoint_minutes}")
    check_flags(p, {"--moves": args.moves, "--n-envs": args.n_envs, "--eval-every": args.eval_every,
                    "--eval-deals": args.eval_deals})  # fmt: skip
    try:
        settings = load_settings(args.env, args.seed, args.hyperparams, n_moves=args.moves,
                                 n_envs=args.n_envs, eval_every=args.eval_every,
                                 eval_deals=args.eval_deals)  # fmt: skip
        settings.env_seeds()  # refuses seeds that reach other deals
        Learner.check_network(settings)
        Learner.check_buildable(settings)
        Learner.check_memory(settings)
        run_dir = args.out / "td" / f"{env_name(args.env)}-seed{args.seed}"
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
            summary = run(settings, run_dir, args.resume, not args.no_progress, args.checkpoint_minutes)
        except checkpoint.CheckpointError as err:  # --resume: damaged, or of other settings
            p.error(f"{run_dir / CHECKPOINT}: {err}" if str(run_dir) not in str(err) else str(err))
    if "interrupted" in summary:
        name = signal.Signals(summary["interrupted"]).name
        print(f"td: stopped by {name} at move {summary['moves']:,}; checkpoint in {run_dir / CHECKPOINT}; "
              "continue with the same command and --resume", file=sys.stderr)  # fmt: skip
        return 128 + summary["interrupted"]
    print(f"td on {settings.env_id}, seed {settings.seed}: {summary['moves']:,} moves in "
          f"{summary['seconds']}s "
          f"({summary['moves_per_second']:,} moves/s), validation win rate {summary['val_win_rate']:.2%} "
          f"-> {run_dir}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
