"""Dependencies point one way: production code never imports the tests' reference rules, and a game
folder imports only the core, the four-slot engine and itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PRODUCTION = [p for d in ("quadrat_env", "agents", "experiments") for p in sorted((ROOT / d).rglob("*.py"))]


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names.extend(a.name for a in node.names)
    return names


@pytest.mark.parametrize("path", PRODUCTION, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_production_module_imports_a_reference(path):
    if path.name == "reference.py":
        return
    assert not [m for m in _imports(path) if m.endswith(".reference")]
