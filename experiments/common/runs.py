"""Run folders: one run's files each, never silently mixed with or replaced by another run's."""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from quadrat_env.files import finish_run, replaced_dir


def claim_run_dir(run_dir: Path, overwrite: bool) -> None:
    """Make ``run_dir`` for a new run. A folder that exists and holds anything is refused
    (``ValueError``, the folder untouched) unless ``overwrite``, which moves it to ``replaced_dir``,
    deleted only when the new run finishes (``finish_run``): a replacement stopped on the way
    leaves the earlier run there. Overwritten again before it finished, the unfinished one goes."""
    if run_dir.exists() and not run_dir.is_dir():
        raise ValueError(f"run folder {run_dir} is a file")
    if run_dir.is_dir() and any(run_dir.iterdir()):
        if not overwrite:
            raise ValueError(f"run folder {run_dir} holds an earlier run; pass --overwrite to delete it and "
                             "start again, or choose another --out or --seed")  # fmt: skip
        kept = replaced_dir(run_dir)
        if kept.is_dir() and not any((run_dir / done).is_file() for done in FINISHED):
            shutil.rmtree(run_dir)  # an unfinished replacement: the run it replaces stays kept
        else:
            if kept.is_dir():
                shutil.rmtree(kept)
            kept.parent.mkdir(exist_ok=True)
            run_dir.rename(kept)
            print(f"the earlier run of {run_dir} is kept in {kept} until this one finishes", file=sys.stderr)
    run_dir.mkdir(parents=True, exist_ok=True)


#: The files a run writes last, once it has finished (imitation: rounds.json).
FINISHED = ("summary.json", "rounds.json")


#: A settings file's limits: its size, and its aliases (the shipped files use at most 13; a
#: kilobyte of nested aliases expands to billions of items where a reader walks them).
YAML_BYTES, YAML_ALIASES = 1 << 20, 40


def read_yaml(path: Path, what: str) -> Any:
    """A settings file, read within bounds: a regular file of at most ``YAML_BYTES`` (never
    ``/dev/zero``) with at most ``YAML_ALIASES`` aliases; ``ValueError`` naming it otherwise."""
    try:
        if not path.is_file():
            raise ValueError("not a regular file")
        with path.open("rb") as f:
            data = f.read(YAML_BYTES + 1)
        if len(data) > YAML_BYTES:
            raise ValueError(f"over {YAML_BYTES:,} bytes")
        aliases = sum(isinstance(e, yaml.AliasEvent) for e in yaml.parse(data.decode("utf-8")))
        if aliases > YAML_ALIASES:
            raise ValueError(f"{aliases} aliases, over {YAML_ALIASES}")
        return yaml.safe_load(data.decode("utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError, ValueError) as err:
        raise ValueError(f"cannot read {what} from {path}: {type(err).__name__}: {err}") from None


def check_resumable(run_dir: Path, config: dict[str, Any], checkpoint: str,
                    finished: str = "summary.json") -> None:  # fmt: skip
    """``--resume``: the folder holds an unfinished run of exactly this config, with a checkpoint
    (``finished``: the file a run writes last)."""
    saved = run_dir / "config.yml"
    if not saved.is_file():
        raise ValueError(f"--resume: {run_dir} holds no run to continue (no config.yml)")
    try:
        old = yaml.safe_load(saved.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError) as err:
        raise ValueError(f"--resume: {saved} cannot be read ({type(err).__name__}); the run cannot be "
                         "checked against it, so it is not continued") from None  # fmt: skip
    if not isinstance(old, dict):
        raise ValueError(f"--resume: {saved} holds no settings (empty or damaged); the run is not continued")
    old = {k: v for k, v in old.items() if k != "labels_made"}
    if old != config:
        keys = sorted(k for k in {*old, *config} if old.get(k) != config.get(k))
        raise ValueError(f"--resume: these settings differ from the run's config.yml: {', '.join(keys)}; "
                         "resume with the arguments the run was started with")  # fmt: skip
    if (run_dir / finished).is_file():  # a kill between a run's last two steps left its checkpoint
        finish_run(run_dir, checkpoint)
        raise ValueError(f"--resume: the run in {run_dir} has finished ({finished})")
    if (run_dir / checkpoint).exists() and not (run_dir / checkpoint).is_file():
        raise ValueError(f"--resume: {run_dir / checkpoint} is not a file")
    if not (run_dir / checkpoint).is_file():
        raise ValueError(f"--resume: {run_dir} has no {checkpoint} (the run stopped before its first "
                         "one); start it again with --overwrite")  # fmt: skip


def open_run_dir(
    run_dir: Path, config: dict[str, Any], checkpoint: str, resume: bool, overwrite: bool,
    held: contextlib.ExitStack | None = None, finished: str = "summary.json",
) -> None:  # fmt: skip
    """A run's folder before any work: ``--resume`` checks it holds an unfinished run of exactly
    ``config`` (``check_resumable``); otherwise it is claimed for a new run (``claim_run_dir``).
    With ``held``, the folder is first held by this run until ``held`` closes (``exclusive_run``): a
    second run into it is refused with ``FolderBusy``. A file where a folder of the path must be
    is a ``ValueError`` naming it (``--out`` given a file)."""
    check_run_dir(run_dir, config, checkpoint, resume, overwrite, held, finished)
    if not resume:
        claim_run_dir(run_dir, overwrite)


def check_run_dir(
    run_dir: Path, config: dict[str, Any], checkpoint: str, resume: bool, overwrite: bool,
    held: contextlib.ExitStack | None = None, finished: str = "summary.json",
) -> None:  # fmt: skip
    """``open_run_dir``'s checks (and the hold), deleting nothing: a run of many seeds checks every
    seed's folder first, so ``--overwrite`` deletes none of them when one cannot be claimed."""
    for folder in (run_dir, *run_dir.parents):
        if folder.exists() and not folder.is_dir():
            raise ValueError(f"{folder} is a file, not a folder: no run folder can go there (check --out)")
    if held is not None:
        from quadrat_env.files import exclusive_run

        held.enter_context(exclusive_run(run_dir))
    if resume:
        check_resumable(run_dir, config, checkpoint, finished)
    elif run_dir.is_dir() and any(run_dir.iterdir()) and not overwrite:
        raise ValueError(f"run folder {run_dir} holds an earlier run; pass --overwrite to delete it and "
                         "start again, or choose another --out or --seed")  # fmt: skip


class RunInterrupted(Exception):
    """SIGINT or SIGTERM arrived (see ``signals_as_exceptions``)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum, self.name = signum, signal.Signals(signum).name


@contextlib.contextmanager
def on_stop_signals(handle: Callable[[int, Any], None]) -> Iterator[None]:
    """``handle`` for SIGINT and SIGTERM inside the block; the handlers before it afterwards."""
    old = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


class StopAtBoundary:
    """A SIGINT / SIGTERM handler for ``on_stop_signals``: a run checks ``signal`` between updates,
    checkpoints and stops there; a second signal stops it at once."""

    def __init__(self) -> None:
        self.signal = 0

    def __call__(self, signum: int, frame: Any) -> None:
        if self.signal:
            signal.signal(signum, signal.SIG_DFL)
            signal.raise_signal(signum)
        self.signal = signum


def signals_as_exceptions() -> contextlib.AbstractContextManager[None]:
    """SIGTERM, like Ctrl-C, raises (``RunInterrupted``) where the run is, so that ``finally``
    blocks run (worker processes are stopped) and the caller can exit 130 or 143."""

    def handle(signum: int, frame: Any) -> None:
        raise RunInterrupted(signum)

    return on_stop_signals(handle)


class RunSettings:
    """What the typed settings of the YAML-keyed learners share (a base of their dataclasses): an
    entry of a YAML table keyed by env ID, checked field by field."""

    #: Fields the YAML entry never names (set by the command).
    FROM_COMMAND: tuple[str, ...] = ("env_id", "seed", "method")

    @classmethod
    def from_entry(cls, env_id: str, seed: int, entry: dict[str, Any]) -> Any:
        known = {f.name for f in dataclasses.fields(cls)} - set(cls.FROM_COMMAND)  # type: ignore[arg-type]
        unknown = sorted(set(entry) - known)
        if unknown:
            raise ValueError(f"unknown settings: {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        missing = sorted(f.name for f in dataclasses.fields(cls) if f.name in known  # type: ignore[arg-type]
                         and f.name not in entry and f.default is dataclasses.MISSING
                         and f.default_factory is dataclasses.MISSING)  # fmt: skip
        if missing:
            raise ValueError(f"the settings of {env_id} lack {', '.join(missing)}")
        types = {f.name: f.type for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        for name, value in entry.items():
            if not _of_type(value, str(types[name])):
                raise ValueError(f"{name} must be {_WORDS[str(types[name])]}, got {value!r}")
        return cls(env_id=env_id, seed=seed, **entry)

    @classmethod
    def load(cls, env_id: str, seed: int, path: Path, **overrides: Any) -> Any:
        """The entry of ``env_id`` in the YAML file ``path``, with the ``overrides`` that are not None."""
        table = read_yaml(path, "settings")
        if not isinstance(table, dict) or not isinstance(table.get(env_id), dict):
            raise ValueError(f"{path} has no entry for {env_id!r}")
        entry = {**table[env_id], **{k: v for k, v in overrides.items() if v is not None}}
        return cls.from_entry(env_id, seed, entry)

    def check_numbers(self, wholes: dict[str, int], fractions: tuple[str, ...]) -> None:
        """Whole numbers at least their minimum (``wholes``) and numbers in [0, 1] (``fractions``)."""
        for name, least in wholes.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be a whole number >= {least}, got {value!r}")
        for name in fractions:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")
        for name in ("env_kwargs", "features_kwargs"):
            if not isinstance(getattr(self, name, {}), dict):
                raise ValueError(f"{name} must be a mapping, got {getattr(self, name)!r}")


#: What each checked annotation of a settings field is called in an error.
_WORDS = {"int": "a whole number", "float": "a number", "str": "a string", "str | None": "a string or none",
          "list[int]": "a list of whole numbers", "dict[str, Any]": "a mapping"}  # fmt: skip


def _of_type(value: Any, annotation: str) -> bool:
    """Whether a YAML value fits a settings field's annotation (as written: "int", "float",
    "list[int]", ...); an annotation not listed here is not checked."""
    whole = isinstance(value, int) and not isinstance(value, bool)
    checks = {
        "int": whole,
        "float": whole or isinstance(value, float),
        "str": isinstance(value, str),
        "str | None": value is None or isinstance(value, str),
        "list[int]": isinstance(value, list)
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value),
        "dict[str, Any]": isinstance(value, dict),
    }
    return checks.get(annotation, True)


def check_flags(p: Any, flags: dict[str, int | None]) -> None:
    """Whole-number flags that override a YAML setting are at least 1, else one line naming the flag
    the user typed (not the YAML key it overrides)."""
    for flag, value in flags.items():
        if value is not None and value < 1:
            p.error(f"{flag} must be >= 1, got {value}")


def network_name(summary: dict[str, Any]) -> str:
    """The network a run's summary names, with its layers ("mlp 64x64", "zudecken-afterstates");
    "" where it names none (the older runs' summaries). A JAX TD run's names it as ``features``."""
    layers = "x".join(str(n) for n in summary.get("net_arch") or [])
    name = summary.get("network") or summary.get("features") or ""
    return " ".join(part for part in (str(name), layers) if part)
