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


SHARED = ("quadrat_env.core", "quadrat_env.cards", "quadrat_env.registry")


def _package_imports(path: Path) -> list[str]:
    return [m for m in _imports(path) if m.startswith("quadrat_env")]


@pytest.mark.parametrize("path", sorted((ROOT / "quadrat_env" / "games").glob("*/*.py")),
                         ids=lambda p: str(p.relative_to(ROOT)))  # fmt: skip
def test_a_game_folder_imports_only_the_core_the_four_slot_engine_and_itself(path):
    own = f"quadrat_env.games.{path.parent.name}"
    allowed = (*SHARED, "quadrat_env.slots", own)
    assert [m for m in _package_imports(path) if not m.startswith(allowed)] == []


@pytest.mark.parametrize("path", sorted((ROOT / "quadrat_env" / "slots").glob("*.py")),
                         ids=lambda p: str(p.relative_to(ROOT)))  # fmt: skip
def test_the_four_slot_engine_imports_only_the_core(path):
    allowed = (*SHARED, "quadrat_env.slots")
    assert [m for m in _package_imports(path) if not m.startswith(allowed)] == []
