"""Dependencies point one way: production code never imports the tests' reference rules, and a game
folder imports only the core, the four-slot engine and itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
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


def _full_imports(path: Path) -> list[str]:
    """Every module an import statement names, ``from a import b`` counted as ``a`` and ``a.b``."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names += [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names += [a.name for a in node.names]
    return names


SCRIPTS = sorted((ROOT / "scripts").glob("*.py"))
TESTS = sorted((ROOT / "tests").rglob("*.py"))


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_games_are_reached_only_through_the_registry():
    """Outside quadrat_env/games/ no production module imports a game's folder; only the package's
    ``__init__`` imports ``quadrat_env.games`` as a whole (which registers every game)."""
    found = {}
    for path in PRODUCTION:
        if (ROOT / "quadrat_env" / "games") in path.parents:
            continue
        bad = [m for m in _full_imports(path) if m.startswith("quadrat_env.games.")]
        if path != ROOT / "quadrat_env" / "__init__.py":
            bad += [m for m in _full_imports(path) if m == "quadrat_env.games"]
        if bad:
            found[_rel(path)] = bad
    assert found == {}


STUDY = ("quadrat_env.agents.zudecken", "quadrat_env.experiments.zudecken")


def test_nothing_outside_a_zudecken_folder_imports_from_it():
    """The Zudecken study is used through the registries (agents.make, networks by name, the
    benchmark's study hooks), never imported by shared code, scripts or other tests."""
    found = {}
    for path in [*PRODUCTION, *SCRIPTS, *TESTS]:
        if "zudecken" in path.relative_to(ROOT).parts[:-1]:
            continue
        bad = [m for m in _full_imports(path) if m.startswith(STUDY)]
        if bad:
            found[_rel(path)] = bad
    assert found == {}


def test_no_module_imports_another_modules_private_name():
    found = {}
    for path in [*PRODUCTION, *SCRIPTS]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("quadrat_env"):
                private = [
                    a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")
                ]
                if private:
                    found.setdefault(_rel(path), []).extend(private)
    assert found == {}


def test_the_reference_rules_are_imported_only_by_tests_and_scripts():
    found = {_rel(p): [m for m in _full_imports(p) if m.endswith(".reference")] for p in PRODUCTION
             if p.name != "reference.py"}  # fmt: skip
    assert {k: v for k, v in found.items() if v} == {}
