"""The optional extras, and one clear line when a command needs one that is not installed.

The environments need only gymnasium, numpy and numba. Training, pictures, windows and the other
frameworks come with extras (``pip install "quadrat-env[train]"`` and so on; from a clone,
``pip install ".[train]"``). A command that reaches a missing one stops with one line naming the
extra to install, never a traceback:

* ``command`` wraps a command's ``main``;
* ``importing`` guards a command module's own top-level imports (``python -m`` runs the module
  itself, so its imports happen before ``main``).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

#: The extra that brings each optional top-level module.
EXTRA_OF = {
    **dict.fromkeys(
        (
            "torch",
            "stable_baselines3",
            "sb3_contrib",
            "tqdm",
            "rich",
            "yaml",
            "tensorboard",
            "matplotlib",
            "imageio",
            "rliable",
        ),
        "train",
    ),  # fmt: skip
    "PIL": "render",
    "pygame": "human",
    "moviepy": "video",
    "ray": "ray",
    **dict.fromkeys(("torchrl", "tensordict", "tianshou", "rl_zoo3"), "frameworks"),
    "hypothesis": "dev",
    **dict.fromkeys(("jax", "jaxlib", "optax"), "jax"),
}


class MissingExtra(ImportError):
    """An optional package is not installed; the message names the extra that brings it."""


def missing_extra(err: BaseException) -> MissingExtra | None:
    """``err`` as a ``MissingExtra`` if it is a missing optional package, else None."""
    if isinstance(err, MissingExtra):
        return err
    if not isinstance(err, ModuleNotFoundError) or not err.name:
        return None
    top = err.name.split(".")[0]
    extra = EXTRA_OF.get(top)
    if extra is None:
        return None
    return MissingExtra(f"this needs the '{extra}' extra ({top} is not installed): {_how(extra)}")


def needs(extra: str, package: str, what: str) -> MissingExtra:
    """The error for ``what`` (e.g. ``render_mode='rgb_array'``) without ``package``."""
    return MissingExtra(f"{what} needs {package}, which comes with the '{extra}' extra: {_how(extra)}")


def _how(extra: str) -> str:
    return f'pip install "quadrat-env[{extra}]" (from a clone: pip install ".[{extra}]")'


def _stop(prog: str, err: MissingExtra) -> int:
    print(f"{prog}: {err}", file=sys.stderr)
    return 1


#: What the disk or the machine refuses (full disk, quota, ``ulimit -f``, read-only or not permitted):
#: one line and exit status 1.
_MACHINE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM}


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where a command is as Ctrl-C is, so that its ``finally`` blocks run."""


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated


def one_blas_thread_under_an_address_limit() -> None:
    """Under an address-space limit (``ulimit -v``), OpenBLAS, which numba loads through scipy at its
    first compile, reserves a buffer for each of its threads and, refused, spins at the import for
    good (Ctrl-C and SIGTERM wait for Python, which never comes back). With one thread it needs one
    buffer and loads, and the command then meets the limit as an out-of-memory line. A user's own
    ``OPENBLAS_NUM_THREADS`` is kept; without a limit nothing changes."""
    try:
        import resource
    except ImportError:  # not on Unix: no such limit
        return
    if resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def command(main: Callable[..., int]) -> Callable[..., int]:
    """A command's ``main`` that answers a missing extra with one line on stderr and exit status 1,
    stops quietly when its reader goes away (``| head``), as Unix tools do, and answers Ctrl-C and
    SIGTERM where the command has no checkpoint to make with one line and exit status 130 / 143,
    not a traceback, after its ``finally`` blocks ran (worker processes stopped; commands that
    checkpoint catch the signals themselves and say where the checkpoint is)."""

    @functools.wraps(main)
    def run(*args: Any, **kwargs: Any) -> int:
        one_blas_thread_under_an_address_limit()
        own = threading.current_thread() is threading.main_thread()  # only there can it set handlers
        before = signal.getsignal(signal.SIGTERM) if own else None
        if own and before == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _raise_terminated)
        try:
            with stops_kept():
                return main(*args, **kwargs)
        except BrokenPipeError:
            _silence_stdout()
            return 1
        except Terminated:
            print(f"{_prog(main)}: stopped by SIGTERM", file=sys.stderr)
            return 143
        except OSError as err:
            if err.errno not in _MACHINE_ERRORS:
                raise
            where = f"{err.strerror}" + (f": {err.filename}" if err.filename else " (writing a file)")
            print(f"{_prog(main)}: {where} (the machine refused, not the input: every file written before "
                  "is kept whole, as writes are atomic)", file=sys.stderr)  # fmt: skip
            return 1
        except KeyboardInterrupt:
            print(f"{_prog(main)}: stopped by Ctrl-C", file=sys.stderr)
            return 130
        except (MemoryError, RuntimeError) as err:  # torch's allocator raises a RuntimeError
            if (said := _out_of_memory(err)) is None:
                raise
            print(f"{_prog(main)}: {said}", file=sys.stderr)
            return 1
        except (ModuleNotFoundError, MissingExtra) as err:
            missing = missing_extra(err)
            if missing is None:
                raise
            return _stop(_prog(main), missing)
        finally:
            if own and before == signal.SIG_DFL:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)

    return run


@contextlib.contextmanager
def stops_kept() -> Iterator[None]:
    """Ctrl-C and SIGTERM that Python drops are sent again. A stop raised while a garbage-collection
    callback runs (JAX registers one) is "ignored" by Python: printed and dropped, and the command
    would go on to the end as if no signal came. Inside this block such a signal is sent again a
    moment later, once the callback has returned, to whatever handler is installed then. A
    ``MemoryError`` dropped so (numba's cleanups under ``ulimit -v``) is not printed: the command
    meets the limit again and says so in its one line."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        stop = unraisable.exc_value
        if isinstance(stop, MemoryError):  # dropped in a cleanup: the command's own line says it
            return None
        if not isinstance(stop, KeyboardInterrupt) and not hasattr(stop, "signum"):
            return before(unraisable)
        signum = getattr(stop, "signum", signal.SIGTERM if isinstance(stop, Terminated) else signal.SIGINT)
        again = threading.Timer(0.01, os.kill, (os.getpid(), signum))
        again.daemon = True
        again.start()

    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = before


def _out_of_memory(err: BaseException) -> str | None:
    """One line for running out of memory (Python's ``MemoryError``, torch's allocator), else None."""
    import re

    text = str(err)
    if not isinstance(err, MemoryError) and not re.search(r"can't allocate memory|out of memory", text):
        return None
    tried = re.search(r"allocate (\d+) bytes", text)
    size = f" (it asked for {int(tried.group(1)) / 2**20:,.0f} MiB more)" if tried else ""
    return (
        f"out of memory{size}: lower the run's sizes (--n-envs, batch sizes); a run that "
        "checkpoints keeps its last checkpoint"
    )


def _silence_stdout() -> None:
    # The interpreter flushes stdout once more at exit, which would fail on the closed pipe again
    # (Python's documented recipe, "Note on SIGPIPE" in the signal module).
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # a stdout without a file descriptor (a test's capture)
        pass


@contextlib.contextmanager
def importing(module: str) -> Iterator[None]:
    """Guard a command module's top-level imports: a missing extra raises ``MissingExtra``;
    when the module runs as a command (``module == "__main__"``), one line and exit status 1."""
    try:
        yield
    except (ModuleNotFoundError, MissingExtra) as err:
        missing = missing_extra(err)
        if missing is None:
            raise
        if module == "__main__":
            raise SystemExit(_stop(_prog(None), missing)) from None
        raise missing from None


def _prog(main: Callable[..., Any] | None) -> str:
    """The command's name as its usage line shows it (argparse's ``prog``)."""
    import os

    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if name.endswith(".py") and name != "__main__.py":  # python -m: the module's file
        return name.removesuffix(".py")
    if name in ("", "-c", "__main__.py"):
        return (getattr(main, "__module__", None) or "quadrat-env").rsplit(".", 1)[-1]
    return name
