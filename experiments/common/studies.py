"""The studies of one game (subpackages of ``experiments/``, such as ``experiments/zudecken/``),
found by walking the folder, so that the shared commands never name a game.

A study's ``__init__`` may define ``readme_sections(result)`` and ``page_sections(result)``: the
README's and the benchmark page's sections that the benchmark's ``--update-docs`` writes from its
result, as ``[((start marker, end marker), markdown), ...]``; ``figures(result, folder)``: the PNGs
it draws from a result beside the benchmark's own; ``exact_optima()``: the exact optimal win rates
its committed results hold, ``{env ID: rate}``; ``COMMANDS``: its commands in ``quadrat``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any


def studies() -> Iterator[ModuleType]:
    package = importlib.import_module("quadrat_env.experiments")
    for info in pkgutil.iter_modules(package.__path__):
        if info.ispkg and info.name != "common":  # what the commands share is no study
            yield importlib.import_module(f"quadrat_env.experiments.{info.name}")


def readme_sections(result: dict[str, Any]) -> list[tuple[tuple[str, str], str]]:
    """Every study's README sections for a benchmark result."""
    return [section for study in studies() if hasattr(study, "readme_sections")
            for section in study.readme_sections(result)]  # fmt: skip


def page_sections(result: dict[str, Any]) -> list[tuple[tuple[str, str], str]]:
    """Every study's sections of the benchmark page for a benchmark result."""
    return [section for study in studies() if hasattr(study, "page_sections")
            for section in study.page_sections(result)]  # fmt: skip


def figures(result: dict[str, Any], folder: Path) -> None:
    """Every study's figures of a benchmark result, drawn into ``folder``."""
    for study in studies():
        if hasattr(study, "figures"):
            study.figures(result, folder)


def exact_optima() -> dict[str, float]:
    """Every study's exact optima from its committed results: env ID -> the optimal win rate."""
    return {env_id: rate for study in studies() if hasattr(study, "exact_optima")
            for env_id, rate in study.exact_optima().items()}  # fmt: skip


def recorded_optima() -> dict[str, float]:
    """Every optimum a study's committed exact record holds (Zudecken: every rung of the ladder),
    env ID -> the optimal win rate: read, never solved."""
    return {env_id: rate for study in studies() if hasattr(study, "recorded_optima")
            for env_id, rate in study.recorded_optima().items()}  # fmt: skip
