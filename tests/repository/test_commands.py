"""Every ``python -m`` command the README, the docs and the modules' docstrings show exists and answers
``--help``: a renamed or removed module is found here, not by a reader."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CODE = ("quadrat_env", "agents", "experiments", "scripts")
TEXTS = [ROOT / "README.md", ROOT / "Makefile", ROOT / "results" / "README.md",
         *sorted((ROOT / "docs").rglob("*.md")),
         *(p for d in CODE for p in sorted((ROOT / d).rglob("*.py")))]  # fmt: skip
COMMAND = re.compile(r"python -m ((?:quadrat_env|scripts)(?:\.\w+)+)")


def shown() -> dict[str, list[str]]:
    """Each module a ``python -m`` command names -> where it is shown."""
    out: dict[str, list[str]] = {}
    for path in TEXTS:
        text = path.read_text(encoding="utf-8")
        for found in COMMAND.finditer(text):
            if text[found.end() : found.end() + 2] != ".<":  # a placeholder: python -m package.<name>
                out.setdefault(found.group(1), []).append(str(path.relative_to(ROOT)))
    return out


COMMANDS = shown()


def test_the_docs_show_commands():
    assert len(COMMANDS) > 15 and "quadrat_env.experiments.td" in COMMANDS


@pytest.mark.parametrize("module", sorted(COMMANDS))
def test_each_shown_command_exists_and_answers_help(module, monkeypatch):
    assert importlib.util.find_spec(module) is not None, (
        f"{module}, shown in {COMMANDS[module]}, does not exist"
    )
    main = getattr(importlib.import_module(module), "main", None)
    assert callable(main), f"{module} has no main()"
    monkeypatch.setattr(sys, "argv", [module.rsplit(".", 1)[-1], "--help"])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            code = main(["--help"]) if _takes_argv(main) else main()
        except SystemExit as stop:  # argparse's --help
            code = stop.code
    assert code == 0 and "usage" in out.getvalue().lower(), out.getvalue()[-500:]


def _takes_argv(main) -> bool:  # noqa: ANN001
    import inspect

    return bool(inspect.signature(main).parameters)


#: ``quadrat <command>`` as the pages write it (in code: at a line's start or after a space, a
#: backtick or a bracket), and ``--algo`` after ``quadrat train``.
TOOL = re.compile(r"(?:^|(?<=[\s`(]))quadrat ([a-z][\w-]*)((?: [^\s`]+)*)", re.M)


def tool_commands() -> dict[str, list[str]]:
    """Each ``quadrat`` subcommand (``train --algo A`` as ``train:A``) the README and docs name -> where."""
    out: dict[str, list[str]] = {}
    for path in (p for p in TEXTS if p.suffix != ".py"):
        for found in TOOL.finditer(path.read_text(encoding="utf-8")):
            name, rest = found.group(1), found.group(2).split()
            algo = rest[rest.index("--algo") + 1] if "--algo" in rest[:-1] else ""
            if name == "train" and algo.islower() and "|" not in algo:  # not a placeholder (ALGO, a|b)
                name += ":" + algo
            out.setdefault(name, []).append(str(path.relative_to(ROOT)))
    return out


TOOL_COMMANDS = tool_commands()


def test_the_docs_show_the_tool():
    assert {"train:ppo_jax", "bench", "play"} <= set(TOOL_COMMANDS)


@pytest.mark.parametrize("name", sorted(TOOL_COMMANDS))
def test_each_quadrat_command_the_docs_name_exists(name):
    from quadrat_env.experiments import cli

    command, _, algo = name.partition(":")
    assert command in cli.commands(), f"quadrat {command}, shown in {TOOL_COMMANDS[name]}, does not exist"
    assert not algo or algo in cli.TRAIN, (
        f"quadrat train --algo {algo} ({TOOL_COMMANDS[name]}) does not exist"
    )


def shown_trainings() -> list[tuple[str, str, str]]:
    """(algo, env ID, settings file) of each ``quadrat train --algo A --env E`` line the pages show."""
    from quadrat_env.registry import resolve_id

    found = []
    for path in (p for p in TEXTS if p.suffix != ".py"):
        for match in TOOL.finditer(path.read_text(encoding="utf-8")):
            rest = match.group(2).split()
            if match.group(1) != "train" or not {"--algo", "--env"} <= set(rest[:-1]):
                continue
            algo, env = rest[rest.index("--algo") + 1], rest[rest.index("--env") + 1]
            if not algo.islower() or env.isupper():  # a placeholder: quadrat train --algo ALGO --env ID
                continue
            settings = rest[rest.index("--hyperparams") + 1] if "--hyperparams" in rest[:-1] else algo
            found.append((algo, resolve_id(env), settings))
    return found


@pytest.mark.parametrize("algo, env_id, settings", sorted(set(shown_trainings())))
def test_each_training_the_docs_show_has_its_settings(algo, env_id, settings):
    """A shown ``quadrat train`` line finds its env in the settings file it reads (no entry: it stops)."""
    import yaml

    folder = ROOT / "experiments" / "hyperparams"
    entries = yaml.safe_load((folder / f"{settings}.yml").read_text())
    assert env_id in entries, f"quadrat train --algo {algo} --env {env_id}: no entry in {settings}.yml"
