"""The command line the JAX learners share: settings from a YAML table keyed by env ID, the run
folder held from the first check to the last file, ``--resume``, ``--export``, one line on bad input."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import yaml
from quadrat_env.experiments.common.checkpoint import CheckpointError
from quadrat_env.experiments.common.jax_learners import memory
from quadrat_env.experiments.common.jax_learners import run as jax_run
from quadrat_env.experiments.common.runs import check_flags, check_run_dir, claim_run_dir

from quadrat_env import seeds
from quadrat_env.files import atomic_write
from quadrat_env.registry import resolve_id
from quadrat_env.registry import short_name as env_name


@dataclass(frozen=True)
class Learner:
    """One JAX learner's command: its name (``runs/<name>/...``), settings class (a ``RunSettings``
    dataclass), YAML table, jitted core (built from the settings) and export to ``model.zip``."""

    name: str
    description: str
    settings: type
    hyperparams: Path
    core: Callable[[Any], Any]
    export: Callable[[Path], Path]

    def train(self, settings: Any, run_dir: Path, resume: bool = False, progress: bool = True,
              checkpoint_minutes: float = 10.0) -> dict[str, Any]:  # fmt: skip
        """One run into ``run_dir``: the summary, or how it was interrupted (``run.run``)."""
        return jax_run.run(settings, self.core(settings), run_dir, resume, progress, checkpoint_minutes,
                           self.export)  # fmt: skip

    def train_seeds(
        self, settings: list[Any], run_dirs: list[Path], resume: bool = False, progress: bool = True,
        checkpoint_minutes: float = 10.0,
    ) -> list[dict[str, Any]]:  # fmt: skip
        """Several seeds of the same settings in one program, each into its folder (``run.run_seeds``)."""
        return jax_run.run_seeds(settings, [self.core(s) for s in settings], run_dirs, resume, progress,
                                 checkpoint_minutes, self.export)  # fmt: skip


#: The largest training seed: every generator a run seeds (numpy, JAX's keys, torch's in the
#: export) takes it.
MAX_SEED = 2**31 - 1
#: Settings only their own flag gives (a ``--set`` of one is refused, never silently ignored).
OWN_FLAGS = {"seed": "--seed", "env_id": "--env"}


def shipped(path: Path | None, folder: Path) -> Path | None:
    """``path``, or where it is no file but a bare name, the shipped ``folder/<name>.yml``."""
    if path is None or path.exists() or len(path.parts) > 1:
        return path
    found = folder / (path.name if path.suffix == ".yml" else f"{path.name}.yml")
    return found if found.is_file() else path


def parser(learner: Learner) -> argparse.ArgumentParser:
    # as typed: "quadrat train" (experiments.cli names it so), else python -m quadrat_env.experiments.<name>
    typed = sys.argv[0] if sys.argv[0].startswith("quadrat ") else None
    module = f"quadrat_env.experiments.{learner.name}"
    prog = typed or f"python -m {module}"
    p = argparse.ArgumentParser(prog=prog, description=learner.description)
    p.add_argument("--env", help="env ID or its short name (Zudecken32, Zudecken, ...)")
    p.add_argument("--seed", type=int, nargs="+", default=[0], metavar="SEED",
                   help="one seed, or several: trained together as one program (for a GPU, where "
                        "more processes of one seed each added no speed), each into its own run "
                        "folder")  # fmt: skip
    p.add_argument("--moves", type=int, help="override n_moves from the YAML (moves over all envs)")
    p.add_argument("--n-envs", type=int, help="override n_envs from the YAML")
    p.add_argument("--eval-every", type=int, metavar="MOVES", help="override eval_every from the YAML")
    p.add_argument("--eval-deals", type=int, help="override eval_deals from the YAML")
    p.add_argument("--test-deals", type=int, help="override test_deals from the YAML (0: none)")
    p.add_argument("--hyperparams", type=Path,
                   help=f"YAML file, or a shipped one by name (ppo_jax_cpu: small settings for a CPU; "
                        f"default: {learner.hyperparams.name})")  # fmt: skip
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="settings",
                   help="override a YAML setting (the value read as YAML), repeatable")  # fmt: skip
    p.add_argument("--out", type=Path, default=Path("runs"), help="parent folder of run folders")
    again = p.add_mutually_exclusive_group()
    again.add_argument("--overwrite", action="store_true", help="replace an earlier run (kept to the end)")
    again.add_argument("--resume", action="store_true", help="continue the run from its last checkpoint")
    again.add_argument("--export", type=Path, metavar="RUN_DIR",  # e.g. after a run on a machine without SB3
                       help="only write RUN_DIR/model.zip from its weights.npz (needs SB3)")  # fmt: skip
    p.add_argument("--checkpoint-minutes", type=float, default=10.0, help="minutes between checkpoints")
    p.add_argument("--no-progress", action="store_true")
    return p


def _checked(learner: Learner, p: argparse.ArgumentParser, args: argparse.Namespace,
             held: contextlib.ExitStack) -> tuple[list[Any], list[Path]]:  # fmt: skip
    """Each seed's settings and folder (held by this run in ``held``), every check done before any work."""
    if not args.checkpoint_minutes >= 0:
        p.error(f"--checkpoint-minutes must be >= 0, got {args.checkpoint_minutes}")
    if args.env is None:
        p.error("--env is required (or --export RUN_DIR)")
    if len(set(args.seed)) < len(args.seed):
        p.error(f"--seed: each seed once, got {' '.join(map(str, args.seed))}")
    if not all(0 <= s <= MAX_SEED for s in args.seed):  # before any work: every RNG a run seeds takes it
        p.error(f"--seed: whole numbers in 0..{MAX_SEED:,} (2**31 - 1), got {' '.join(map(str, args.seed))}")
    check_flags(p, {"--moves": args.moves, "--n-envs": args.n_envs, "--eval-every": args.eval_every,
                    "--eval-deals": args.eval_deals})  # fmt: skip
    try:
        env_id = resolve_id(args.env)
        overrides = settings_of(args)
        path = shipped(args.hyperparams, learner.hyperparams.parent) or learner.hyperparams
        settings = [learner.settings.load(env_id, seed, path, **overrides) for seed in args.seed]
        try:
            learner.core(settings[0])  # the game, the network and its sizes
        except TypeError as err:  # a keyword the env or the network does not take
            raise ValueError(f"{learner.hyperparams.name} settings of {env_id}: {err}") from None
        seeds.VALIDATION.take(settings[0].eval_deals)  # deals that exist: else one line naming the range
        seeds.BENCHMARK.take(settings[0].test_deals)
        run_dirs = [args.out / learner.name / f"{env_name(env_id)}-seed{seed}" for seed in args.seed]
        if args.resume:  # seeds that finished before a stop in the finishing writes: the others go on
            settings, run_dirs = _unfinished(settings, run_dirs)
        for s, run_dir in zip(settings, run_dirs, strict=True):  # every seed's folder checked and held
            check_run_dir(run_dir, s.config(), jax_run.CHECKPOINT, args.resume, args.overwrite, held)
        for run_dir in run_dirs if not args.resume else ():  # then, and only then, claimed
            claim_run_dir(run_dir, args.overwrite)
    except ValueError as err:
        p.error(str(err))
    return settings, run_dirs


def _unfinished(settings: list[Any], run_dirs: list[Path]) -> tuple[list[Any], list[Path]]:
    """The seeds of a ``--resume`` whose runs have not finished; ``ValueError`` if none is left."""
    left = [(s, d) for s, d in zip(settings, run_dirs, strict=True) if not (d / "summary.json").is_file()]
    if not left:
        raise ValueError(f"--resume: every seed's run has finished ({', '.join(map(str, run_dirs))})")
    for s, d in zip(settings, run_dirs, strict=True):
        if (d / "summary.json").is_file():
            print(f"seed {s.seed} has finished ({d}); resuming the others", file=sys.stderr)
    return [s for s, _ in left], [d for _, d in left]


def settings_of(args: argparse.Namespace) -> dict[str, Any]:
    """The settings the command line gives: each ``--set KEY=VALUE``, then each flag given (a flag
    wins over ``--set`` for its key; a flag not given leaves ``--set``'s value, else the YAML's)."""
    flags = {"n_moves": args.moves, "n_envs": args.n_envs, "eval_every": args.eval_every,
             "eval_deals": args.eval_deals, "test_deals": args.test_deals}  # fmt: skip
    return {**assignments(args.settings), **{k: v for k, v in flags.items() if v is not None}}


def assignments(items: list[str]) -> dict[str, Any]:
    """``--set KEY=VALUE`` options as settings (each value read as YAML: 0.05, [128, 128], {a: 1});
    ``ValueError`` naming one that is not ``KEY=VALUE``."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip().isidentifier():
            raise ValueError(f"--set takes KEY=VALUE (a setting's name, then its value), got {item!r}")
        if key.strip() in OWN_FLAGS:
            raise ValueError(f"--set {key.strip()}: give it with {OWN_FLAGS[key.strip()]}, not --set")
        try:
            out[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError:
            raise ValueError(f"--set {key.strip()}: not a YAML value: {value!r}") from None
    return out


def main(learner: Learner, argv: list[str] | None = None) -> int:
    p = parser(learner)
    args = p.parse_args(argv)
    if args.export is not None:
        try:
            print(f"{learner.name}: wrote {learner.export(args.export)}")
        except ValueError as err:
            p.error(str(err))
        return 0
    with contextlib.ExitStack() as held:  # the run folders, held until the runs end
        settings, run_dirs = _checked(learner, p, args, held)
        if not args.resume:
            for s, run_dir in zip(settings, run_dirs, strict=True):
                atomic_write(run_dir / "config.yml", yaml.safe_dump(s.config(), sort_keys=False))
        try:
            summaries = learner.train_seeds(
                settings, run_dirs, args.resume, not args.no_progress, args.checkpoint_minutes
            )
        except CheckpointError as err:  # --resume: damaged, or of other settings
            p.error(str(err))
        except (memory.OutOfMemory, jax.errors.JaxRuntimeError) as err:
            n_envs = settings[0].n_envs
            short = err if isinstance(err, memory.OutOfMemory) else memory.out_of_memory(err, n_envs)
            if short is None:
                raise
            print(f"{learner.name}: {short}", file=sys.stderr)
            if not args.resume:  # refused before its first checkpoint: no run folder left behind
                for run_dir in run_dirs:
                    if [f.name for f in run_dir.iterdir()] == ["config.yml"]:
                        (run_dir / "config.yml").unlink()
                        run_dir.rmdir()
            return 1
    if "interrupted" in summaries[0]:
        again = " ".join(str(run_dir / jax_run.CHECKPOINT) for run_dir in run_dirs)
        print(f"{learner.name}: stopped at move {summaries[0]['moves']:,}; checkpoint in {again}; "
              "continue with the same command and --resume", file=sys.stderr)  # fmt: skip
        return 128 + summaries[0]["interrupted"]
    for s, summary, run_dir in zip(settings, summaries, run_dirs, strict=True):
        test = f", test {summary['test_win_rate']:.2%}" if "test_win_rate" in summary else ""
        print(f"{learner.name} on {s.env_id}, seed {s.seed}: {summary['moves']:,} moves in "
              f"{summary['seconds']}s ({summary['moves_per_second']:,} moves/s on {summary['device']}), "
              f"validation {summary['val_win_rate']:.2%}{test} -> {run_dir}")  # fmt: skip
    return 0
