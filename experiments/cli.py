"""``quadrat``: the project's commands as one tool, rl-zoo3 style (``quadrat <command> --help``).

    quadrat play Zudecken --seed 7                       # play in the terminal
    quadrat train --algo ppo_jax --env Zudecken32        # train (ppo, maskable_ppo, td, td_jax, ppo_jax)
    quadrat bench --env Zudecken32 --model model.zip     # score a policy beside greedy on held-out deals

Each command is a module's ``main(argv)``, imported only when it runs, so ``quadrat --help`` is quick
and a command's extra (torch, JAX) is needed only by that command. A study (a subpackage of
``experiments/``) adds its own commands through ``COMMANDS`` in its ``__init__``.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from quadrat_env.extras import MissingExtra, missing_extra, one_blas_thread_under_an_address_limit, stops_kept

PACKAGE = "quadrat_env.experiments"

#: name -> (module with ``main(argv)``, one line of help). ``train`` picks its module by ``--algo``.
COMMANDS: dict[str, tuple[str, str]] = {
    "play": (f"{PACKAGE}.play", "play a game in the terminal, with hints"),
    "train": ("", "train an agent: --algo ppo | maskable_ppo | td | td_jax | ppo_jax"),
    "bench": (f"{PACKAGE}.compare", "score one policy on the held-out deals beside greedy and the planner"),
    "benchmark": (f"{PACKAGE}.benchmark", "every agent on every env: the benchmark's tables and plots"),
    "seed-rows": (f"{PACKAGE}.seed_rows", "one row from several training seeds: IQM and 95% interval"),
    "publish": (f"{PACKAGE}.publish", "copy trained runs into the committed models"),
    "solve": ("quadrat_env.agents.solver", "solve a deal with the stock order known (the clairvoyant bound)"),
    "record": (f"{PACKAGE}.record", "an episode as an animated GIF or a PNG"),
    "demo": (f"{PACKAGE}.demo", "greedy and random on every game: a deal shown, win rates measured"),
    "speed": (f"{PACKAGE}.throughput", "env steps a second on this machine, every backend in one run"),
}

#: ``quadrat train --algo A`` -> the learner's module (one file each; their settings in hyperparams/).
TRAIN: dict[str, str] = {
    "ppo": f"{PACKAGE}.train",  # SB3 PPO
    "maskable_ppo": f"{PACKAGE}.train",  # sb3-contrib MaskablePPO
    "td": f"{PACKAGE}.td",  # afterstate TD(0), torch
    "td_jax": f"{PACKAGE}.td_jax",  # afterstate TD(0), env and learner in one jitted loop
    "ppo_jax": f"{PACKAGE}.ppo_jax",  # PPO, env and learner in one jitted loop
}


def commands() -> dict[str, tuple[str, str]]:
    """The shared commands and every study's (``COMMANDS`` in a study package's ``__init__``)."""
    from quadrat_env.experiments.common.studies import studies

    found = dict(COMMANDS)
    for study in studies():
        found.update(getattr(study, "COMMANDS", {}))
    return found


def usage(found: dict[str, tuple[str, str]]) -> str:
    width = max(map(len, found))
    lines = [f"  {name.ljust(width)}  {text}" for name, (_, text) in found.items()]
    head = "usage: quadrat <command> [options]   (quadrat <command> --help: its options)"
    return "\n".join(
        [head, "", "commands:", *lines, "", "quadrat-play and quadrat-bench are play and bench."]
    )


def _algo(argv: list[str]) -> tuple[str | None, list[str]]:
    """``--algo A`` (or ``--algo=A``) out of ``argv``: (A, the rest); (None, argv) if absent."""
    for i, arg in enumerate(argv):
        if arg == "--algo" and i + 1 < len(argv):
            return argv[i + 1], argv[:i] + argv[i + 2 :]
        if arg.startswith("--algo="):
            return arg.split("=", 1)[1], argv[:i] + argv[i + 1 :]
    return None, argv


def _train(argv: list[str]) -> tuple[str, list[str]] | int:
    """The learner's module and its arguments, or an exit status (help shown, or a one-line error)."""
    algo, rest = _algo(argv)
    if algo is None:
        if {"-h", "--help"} & set(argv):
            print("usage: quadrat train --algo {" + ",".join(TRAIN) + "} [options]\n\n"
                  "  quadrat train --algo ALGO --help   the learner's options and defaults")  # fmt: skip
            return 0
        print(f"quadrat train: give --algo, one of {', '.join(TRAIN)}", file=sys.stderr)
        return 2
    if algo not in TRAIN:
        print(f"quadrat train: unknown --algo {algo!r}; choose from {', '.join(TRAIN)}", file=sys.stderr)
        return 2
    # train.py (SB3) takes --algo itself; the other learners are one algorithm each
    return TRAIN[algo], (argv if TRAIN[algo].endswith(".train") else rest)


def main(argv: Sequence[str] | None = None) -> int:
    one_blas_thread_under_an_address_limit()  # before anything loads OpenBLAS
    with stops_kept():  # from the first import on: a Ctrl-C in JAX's garbage collection is not lost
        return _main(list(sys.argv[1:] if argv is None else argv))


def _main(args: list[str]) -> int:
    try:
        found = commands()  # imports every study's package
    except KeyboardInterrupt:
        print("quadrat: stopped while starting (Ctrl-C); nothing was done", file=sys.stderr)
        return 130
    if not args or args[0] in ("-h", "--help"):
        _say(usage(found), sys.stdout if args else sys.stderr)
        return 0 if args else 2
    if args[0] == "--version":
        from quadrat_env import __version__

        _say(f"quadrat {__version__}", sys.stdout)
        return 0
    name, rest = args[0], args[1:]
    if name not in found:
        print(f"quadrat: unknown command {name!r}; choose from {', '.join(found)}", file=sys.stderr)
        return 2
    module = found[name][0]
    if name == "train":
        picked = _train(rest)
        if isinstance(picked, int):
            return picked
        module, rest = picked
    sys.argv[0] = f"quadrat {name}"  # argparse's usage line names the command as typed
    return _run(module, rest, sys.argv[0])


def _say(text: str, stream: TextIO) -> None:
    """Print as a Unix tool does: a reader that went away (``quadrat --help | head -3``) ends the
    output quietly, not in a BrokenPipeError traceback."""
    try:
        print(text, file=stream, flush=True)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())  # the interpreter's own flush at exit must not fail too


def _run(module: str, argv: list[str] | None, name: str) -> int:
    """``module.main(argv)``; a Ctrl-C while the module (torch, JAX, ...) is still importing is one
    line and exit 130, and a missing extra one line and exit 1, as they are once the command runs."""
    with stops_kept():
        try:
            command = importlib.import_module(module).main
        except KeyboardInterrupt:
            print(f"{name}: stopped while starting (Ctrl-C); nothing was done", file=sys.stderr)
            return 130
        except (ModuleNotFoundError, MissingExtra) as err:  # the JAX learners import JAX at the top
            if (missing := missing_extra(err)) is None:
                raise
            print(f"{name}: {missing}", file=sys.stderr)
            return 1
        return command(argv)


def play(argv: Sequence[str] | None = None) -> int:
    """``quadrat-play``: ``quadrat play``, by its own name."""
    return _run(COMMANDS["play"][0], None if argv is None else list(argv), "quadrat-play")


def bench(argv: Sequence[str] | None = None) -> int:
    """``quadrat-bench``: ``quadrat bench``, by its own name."""
    return _run(COMMANDS["bench"][0], None if argv is None else list(argv), "quadrat-bench")


if __name__ == "__main__":
    sys.exit(main())
