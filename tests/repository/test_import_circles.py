"""No import circles in the library: module A importing B (at the top or inside a function) while B
imports A, directly or through others. A circle makes the import order matter and hides which module
is the lower layer; ``graphlib`` finds one."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _named(node: ast.Import | ast.ImportFrom, module: str, package: bool) -> list[str]:
    """The modules an import statement names (``from a import b``: ``a.b`` and ``a``)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:  # relative: from the module's package, one level up per extra dot
        parts = module.split(".")[: None if package else -1]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join([*parts, base] if base else parts)
    return [f"{base}.{a.name}" for a in node.names] + [base]


def import_graph(folder: str) -> dict[str, set[str]]:
    """Each module of ``folder`` -> the modules of ``folder`` it imports anywhere in its text."""
    paths = {_module(p): p for p in sorted((ROOT / folder).rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for name in _named(node, module, path.name == "__init__.py"):
                    while name and name not in paths:  # a name inside a module: the module
                        name = name.rpartition(".")[0]
                    if name and name != module and not module.startswith(name + "."):
                        deps.add(name)  # (a module's own package runs first anyway: not an edge)
        graph[module] = deps
    return graph


def circle(graph: dict[str, set[str]]) -> list[str] | None:
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as err:
        return err.args[1]
    return None


def test_the_check_finds_a_circle():
    assert circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) is not None
    assert circle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


@pytest.mark.parametrize("folder", ["quadrat_env"])
def test_the_library_has_no_import_circle(folder):
    graph = import_graph(folder)
    assert len(graph) > 30 and "quadrat_env.registry" in graph["quadrat_env.core.jax_env"]
    assert circle(graph) is None, f"import circle: {' -> '.join(circle(graph))}"
