"""Tasks on worker processes (or Ray) that end with one clear error, never a hang, when one fails.

``jobs`` local processes, or with ``ray`` set, Ray tasks: ``ray="local"`` starts a local Ray
instance with ``jobs`` CPUs, any other string is the address of a cluster to join
(``ray://head:10001`` or ``auto``). Results come back in task order either way, so a run's output
does not depend on where its tasks ran.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any


class WorkerFailed(RuntimeError):
    """A task failed (or its worker process died); the other tasks were cancelled (on Ray: ended with
    the run's Ray driver)."""


RAY_MISSING = "--ray needs Ray: pip install 'quadrat-env[ray]' (or pip install ray)"


def add_ray_argument(parser: Any) -> None:
    """``--ray [ADDRESS]`` on a command that runs its work through ``run_tasks``."""
    parser.add_argument(
        "--ray",
        nargs="?",
        const="local",
        metavar="ADDRESS",
        help="run the tasks on Ray: a local instance with --jobs CPUs, or join ADDRESS",
    )


def check_ray_argument(parser: Any, args: Any) -> None:
    """Without Ray installed, ``--ray`` is one clear line and exit status 2."""
    if args.ray is not None and not ray_available():
        parser.error(RAY_MISSING)


def ray_available() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def _run_on_ray(fn: Callable[..., Any], tasks: Sequence[Any], jobs: int, address: str,
                describe: Callable[[Any], str]) -> Iterator[Any]:  # fmt: skip
    try:
        import ray
    except ImportError:
        raise WorkerFailed(RAY_MISSING) from None
    started = not ray.is_initialized()
    watchdog = None
    if started:
        local = address == "local"
        if local:  # ends the local instance's processes if this one is killed outright
            watchdog = subprocess.Popen([sys.executable, "-m", "quadrat_env.experiments.common.watchdog",
                                         str(os.getpid())], stdin=subprocess.DEVNULL)  # fmt: skip
        ray.init(address=None if local else address, num_cpus=jobs if local else None,
                 include_dashboard=False, log_to_driver=False, configure_logging=False)  # fmt: skip
    remote = ray.remote(_call)
    refs = []
    try:
        refs = [remote.remote(fn, task) for task in tasks]
        for i, task in enumerate(tasks):
            failure = None
            try:
                value = ray.get(refs[i])
            except Exception as err:
                cause = getattr(err, "cause", None) or err
                failure = f"{describe(task)} failed in a Ray task: {type(cause).__name__}: {cause}"
            if failure is not None:  # raised outside the except block, so it holds no Ray error:
                # their frames hold object refs, and an object ref freed after ray.shutdown() can
                # end the whole process (exit status 1, no message). The other tasks are not
                # cancelled one by one: ray.cancel racing a task's completion fails a check in Ray's
                # task manager and ends the driver (ray-project/ray#54798); ending the driver's
                # connection ends its job's tasks, and ray.shutdown() a local instance's processes.
                raise WorkerFailed(failure)
            yield value
    finally:
        refs.clear()
        if started:
            gc.collect()  # refs in reference cycles are freed now, while the driver still runs
            ray.shutdown()
        if watchdog is not None:
            watchdog.kill()
            watchdog.wait()


def _call(fn: Callable[..., Any], task: Any) -> Any:
    return fn(task)


def run_tasks(fn: Callable[..., Any], tasks: Sequence[Any], jobs: int,
              describe: Callable[[Any], str] = repr, ray: str | None = None) -> Iterator[Any]:  # fmt: skip
    """``fn(task)`` for each task, results in task order; on ``jobs`` processes when ``jobs > 1``,
    or as Ray tasks when ``ray`` is set (see the module docstring).

    The first failure cancels what has not started and raises ``WorkerFailed`` naming the task.
    """
    if ray is not None:
        yield from _run_on_ray(fn, tasks, jobs, ray, describe)
        return
    if jobs <= 1:
        for task in tasks:
            try:
                yield fn(task)
            except Exception as err:
                _raise_missing_extra(err)
                raise WorkerFailed(f"{describe(task)} failed: {type(err).__name__}: {err}") from err
        return
    # spawn, not fork: a parent that has used torch (a loaded model) deadlocks forked children
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                               initializer=die_with_parent, initargs=(os.getpid(),))  # fmt: skip
    finished = False
    try:
        futures = [pool.submit(fn, task) for task in tasks]
        for task, future in zip(tasks, futures, strict=True):
            try:
                yield future.result()
            except BrokenProcessPool as err:
                raise WorkerFailed(f"a worker process died while running {describe(task)}: {err}") from err
            except Exception as err:
                _raise_missing_extra(err)
                raise WorkerFailed(f"{describe(task)} failed in a worker process: "
                                   f"{type(err).__name__}: {err}") from err  # fmt: skip
        finished = True
    finally:
        if not finished:  # a failure, Ctrl-C or SIGTERM: running tasks are not waited for
            _stop_workers(pool)
        pool.shutdown(wait=True, cancel_futures=True)


def die_with_parent(parent: int) -> None:
    """In a worker: be killed when the parent process ends, however it ends (SIGKILL included),
    via Linux's PR_SET_PDEATHSIG; elsewhere a no-op. Exits at once if the parent is already gone."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    # ProcessPoolExecutor has no public way to stop running tasks before Python 3.14
    # (terminate_workers); its process table is the documented-in-source way to reach them.
    for process in list(getattr(pool, "_processes", {}).values()):
        with contextlib.suppress(Exception):
            process.kill()


def _raise_missing_extra(err: Exception) -> None:
    """A task that needs a missing extra fails as that (one line naming the extra), not as a task."""
    from quadrat_env.extras import missing_extra

    missing = missing_extra(err)
    if missing is not None:
        raise missing from err
