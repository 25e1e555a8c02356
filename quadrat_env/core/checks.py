"""One rule for every argument a user passes: what counts as a whole number, a number, a choice.

Whole numbers are Python ints or numpy integers (never bools, never floats such as ``32.0``);
numbers are those or Python/numpy floats (never bools). Each check returns the plain Python value
or raises ``ValueError`` naming the argument.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def whole(name: str, value: Any, minimum: int | None = None) -> int:
    """``value`` as an int, if it is a whole number (>= ``minimum``)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    return int(value)


def is_seed(value: Any) -> bool:
    """Whether ``value`` is a seed: None or a whole number >= 0 (a numpy integer too, a bool not)."""
    return value is None or (
        isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and value >= 0
    )


def number(name: str, value: Any, minimum: float | None = None) -> float:
    """``value`` as a finite float (>= ``minimum``)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not math.isfinite(value) or (minimum is not None and value < minimum):
        bound = "" if minimum is None else f" and >= {minimum:g}"
        raise ValueError(f"{name} must be finite{bound}, got {value!r}")
    return float(value)


def choice(name: str, value: Any, choices: tuple[Any, ...]) -> Any:
    """``value`` if it is one of ``choices`` (compared by type too, so ``True`` is not ``1``)."""
    if not any(type(value) is type(c) and value == c for c in choices):
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


def available_memory() -> int | None:
    """Bytes this process may still allocate, about: the least of Linux's MemAvailable, the cgroup's
    memory.max less its use, and the address-space limit (``ulimit -v``) less the process's size;
    None where none can be read."""
    from pathlib import Path

    found = []
    try:
        with open("/proc/meminfo") as f:
            found += [int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:")]
        limit, used = (Path("/sys/fs/cgroup") / n for n in ("memory.max", "memory.current"))
        if limit.is_file() and used.is_file() and limit.read_text().strip() != "max":
            found.append(int(limit.read_text()) - int(used.read_text()))
    except (OSError, ValueError, IndexError):
        pass
    if (left := address_space_left()) is not None:
        found.append(left)
    return max(0, min(found)) if found else None


def address_space_left() -> int | None:
    """Bytes of address space this process may still reserve under ``ulimit -v`` (its limit less its
    size), or None without a limit (or where the size cannot be read)."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        with open("/proc/self/status") as f:
            size = [int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:")]
    except (OSError, ValueError, IndexError):
        return None
    return soft - (size[0] if size else 0)


def check_memory(need: int, what: str, lower: str, reserves: int = 0) -> None:
    """Refuse, before any work, what needs more than 80% of the memory available now: one line with
    the figure and what lowers it. ``reserves``: address space the work reserves beyond ``need``
    without using it as memory (threads' stacks and heaps, a compiler's), held against
    ``ulimit -v`` only: there, running out part-way can hang CPython 3.11 for good (its
    exception handling allocates, fails and tries again), so it is refused here instead."""
    free = available_memory()
    if free is not None and need > 0.8 * free:
        raise ValueError(f"{what} needs about {need / 2**30:,.1f} GiB, more than 80% of the "
                         f"{free / 2**30:.1f} GiB available: {lower}")  # fmt: skip
    left = address_space_left()
    if reserves and left is not None and need + reserves > left:
        raise ValueError(f"{what} needs about {(need + reserves) / 2**30:,.1f} GiB of address space "
                         f"more (with {reserves / 2**30:.1f} GiB that starting it reserves), and "
                         f"the limit (ulimit -v) leaves {max(left, 0) / 2**30:.1f} GiB: raise the "
                         f"limit or {lower}")  # fmt: skip
