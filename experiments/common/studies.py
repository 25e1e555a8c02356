"""The studies of one game (subpackages of ``experiments/``, such as ``experiments/zudecken/``),
found by walking the folder, so that the shared commands never name a game.

A study's ``__init__`` may define ``readme_sections(result)``: the README sections the benchmark's
``--update-docs`` writes from its result, as ``[((start marker, end marker), markdown), ...]``, and
``exact_optima()``: the exact optimal win rates its committed results hold, ``{env ID: rate}``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
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


def exact_optima() -> dict[str, float]:
    """Every study's exact optima from its committed results: env ID -> the optimal win rate."""
    return {env_id: rate for study in studies() if hasattr(study, "exact_optima")
            for env_id, rate in study.exact_optima().items()}  # fmt: skip
