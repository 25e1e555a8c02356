"""The code is formatted and linted by the pinned ruff (constraints.txt), so style is checked by the
test command like everything else."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("command", [["check", "."], ["format", "--check", "."]], ids=["lint", "format"])
def test_ruff(command):
    out = subprocess.run([sys.executable, "-m", "ruff", *command], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-1000:]


CODE = sorted(p for d in ("quadrat_env", "agents", "experiments", "scripts", "tests", "docs")
              for p in (ROOT / d).rglob("*.py"))  # fmt: skip
MAX_FILE_LINES, MAX_FUNCTION_LINES = 400, 50


def test_no_file_is_over_400_lines():
    long = {
        str(p.relative_to(ROOT)): n for p in CODE if (n := len(p.read_text().splitlines())) > MAX_FILE_LINES
    }
    assert long == {}


def test_no_function_is_over_50_lines():
    """Read with ast: a function's lines from its ``def`` (decorators not counted) to its last line."""
    import ast

    long = {}
    for path in CODE:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"] = lines
    assert long == {}
