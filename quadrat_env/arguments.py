"""The argparse ``type=`` functions every command shares: a bad value is one line and exit 2."""

from __future__ import annotations

import argparse
import math
from typing import Any

from quadrat_env.registry import resolve_id


def at_least(minimum: int) -> Any:
    """An argparse ``type=`` for whole numbers >= ``minimum`` (a bad value: one line, exit 2)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    parse.__name__ = f"whole number >= {minimum}"
    return parse


def positive_number(text: str) -> float:
    """An argparse ``type=`` for finite numbers > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return value


def env_arg(text: str) -> str:
    """An argparse ``type=`` for an env: its ID or short name (``Zudecken32``) -> the ID."""
    try:
        return resolve_id(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def description_of(doc: str | None) -> str:
    """A module docstring's first paragraph as one line: a command's ``--help`` description (its
    first line alone may end mid-sentence where the docstring wraps)."""
    return " ".join((doc or "").strip().split("\n\n")[0].split())
