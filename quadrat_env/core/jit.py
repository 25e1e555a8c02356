"""numba, the compiler every game's rules run through (a required dependency).

Each game writes its rules once, as small functions over one state row (an int64 array) that
numba compiles; :mod:`quadrat_env.core.kernel` builds every runtime path from them. Compiled code
is cached on disk (``cache=True``), so only the first use on a machine compiles.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

try:
    import numba
except ImportError as err:  # pragma: no cover - depends on the installation
    raise ImportError(
        "quadrat_env runs every game's rules compiled with numba, which could not be imported "
        f"({err}). Install it with: pip install 'numba>=0.60' (it comes with quadrat-env)"
    ) from err

__all__ = ["jit", "numba"]


def jit(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Compile ``fn`` in nopython mode, cached on disk: the decorator for every rule function."""
    return numba.njit(cache=True, nogil=True)(fn)
