"""numba, the compiler every game's rules run through (a required dependency).

Each game writes its rules once, as small functions over one state row (an int64 array) that
numba compiles; ``quadrat_env.core.kernel`` builds every runtime path from them. Compiled code
is cached on disk, so only the first use on a machine compiles.

The disk cache can only ever cost speed. numba's own cache (``cache=True``) stops the import when
no folder is writable, raises on a full disk, raises on every run once a cache file is damaged,
and keys each function by its own source file only, so a table compiled in from another module
can go stale. ``jit`` attaches ``SafeCache`` instead, which

* falls back to compiling in memory, with one warning naming ``NUMBA_CACHE_DIR``, when no cache
  folder can be had or a cache file cannot be read or written (a damaged index is removed so the
  next run rewrites it);
* keys every compiled function by a fingerprint of its module and name, its bytecode, its constants
  and every global it reads, followed into the compiled functions it calls (``fingerprint``):
  any change to what is compiled in, from whichever module, or a move of the code to another
  module, selects a fresh cache entry.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import types
import warnings
from collections.abc import Callable
from typing import Any

try:
    import numba
    from numba.core.caching import FunctionCache
    from numba.core.dispatcher import Dispatcher
except ImportError as err:  # pragma: no cover - depends on the installation
    raise ImportError(
        "quadrat_env runs every game's rules compiled with numba, which could not be imported "
        f"({err}). Install it with: pip install 'numba>=0.60' (it comes with quadrat-env)"
    ) from err

import numpy as np

__all__ = ["CacheWarning", "SafeCache", "fingerprint", "jit", "numba"]

_HOW = (
    "compiling in memory instead (the rules are the same, only slower to start); set NUMBA_CACHE_DIR "
    "to a writable folder to keep compiled code between runs"
)


class CacheWarning(RuntimeWarning):
    """The compiled-code cache could not be used; the package compiles in memory instead."""


_warned = False


def _warn_once(what: str, err: BaseException) -> None:
    global _warned
    if not _warned:
        _warned = True
        message = f"quadrat_env: {what} ({type(err).__name__}: {err}); {_HOW}"
        warnings.warn(message, CacheWarning, stacklevel=3)


class SafeCache(FunctionCache):
    """numba's per-function disk cache, keyed by ``fingerprint``, whose failures are warnings."""

    def _index_key(self, sig: Any, codegen: Any) -> tuple:
        return (*super()._index_key(sig, codegen), fingerprint(self._py_func))

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        try:
            return super().load_overload(sig, target_context)
        except MemoryError:  # the machine's memory, not the cache: the command says so in one line
            raise
        except Exception as err:  # a damaged or unreadable cache file: compile instead
            _warn_once("could not read the compiled-code cache", err)
            self._forget_index()
            return None

    def save_overload(self, sig: Any, data: Any) -> None:
        try:
            super().save_overload(sig, data)
        except MemoryError:
            raise
        except Exception as err:  # full disk, read-only folder: the compiled code stays in memory
            _warn_once("could not write the compiled-code cache", err)

    def _forget_index(self) -> None:
        """Remove an index that cannot be read, so that the next save writes a whole one."""
        with contextlib.suppress(OSError):
            os.unlink(self._cache_file._index_path)


def jit(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Compile ``fn`` in nopython mode, cached on disk when possible: the decorator for every
    rule function."""
    dispatcher = numba.njit(nogil=True)(fn)
    try:
        # What Dispatcher.enable_caching does, with the safe cache class.
        dispatcher._cache = SafeCache(dispatcher.py_func)
    except Exception as err:  # no writable cache folder, or no source file to stamp
        _warn_once("no folder for the compiled-code cache", err)
    return dispatcher


def fingerprint(fn: Callable[..., Any]) -> str:
    """A hash of everything numba compiles into ``fn``: its bytecode and constants, and the value
    of each global it reads (arrays by their bytes, modules by the attributes it reads, compiled
    functions by their own fingerprint)."""
    memo: dict[int, str] = {}
    return _fingerprint(fn, memo)


def _fingerprint(fn: Any, memo: dict[int, str]) -> str:
    if id(fn) in memo:
        return memo[id(fn)]
    memo[id(fn)] = "recursive"
    h = hashlib.sha256()
    # where it lives too: compiled code loaded from the cache names its callees' modules, so code
    # moved unchanged to another module must not find the old entry
    h.update(f"{fn.__module__}.{fn.__qualname__}".encode())
    code = fn.__code__
    names = _code_names(code)
    h.update(_code_bytes(code))
    for name in sorted(names):
        if name in fn.__globals__:
            h.update(name.encode() + b"=" + _value_bytes(fn.__globals__[name], names, memo))
    memo[id(fn)] = h.hexdigest()
    return memo[id(fn)]


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _code_bytes(code: types.CodeType) -> bytes:
    parts = [code.co_code, repr(code.co_names).encode()]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            parts.append(_code_bytes(const))
        elif isinstance(const, frozenset):  # its repr's order depends on the string hash seed
            parts.append(repr(sorted(map(repr, const))).encode())
        else:
            parts.append(repr(const).encode())
    return b"\0".join(parts)


def _value_bytes(value: Any, names: set[str], memo: dict[int, str]) -> bytes:
    if isinstance(value, Dispatcher):
        return _fingerprint(value.py_func, memo).encode()
    if isinstance(value, np.ndarray):
        return f"{value.dtype}{value.shape}".encode() + np.ascontiguousarray(value).tobytes()
    if isinstance(value, types.ModuleType):
        # only what the function reads of it (``k.EMPTY`` puts both names in co_names)
        got = sorted(n for n in names if n in vars(value))
        return b";".join(n.encode() + b":" + _value_bytes(vars(value)[n], set(), memo) for n in got)
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, tuple)):
        return repr(value).encode()
    # classes, numpy functions, numba types: by name (a repr may hold a memory address)
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None) or str(value)
    return f"{type(value).__qualname__}:{getattr(value, '__module__', '')}.{name}".encode()
