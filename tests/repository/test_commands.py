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
TEXTS = [ROOT / "README.md", ROOT / "Makefile", *sorted((ROOT / "docs").rglob("*.md")),
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
