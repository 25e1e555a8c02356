"""Tasks on worker processes that end with one clear error, never a hang, when a worker fails."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any


class WorkerFailed(RuntimeError):
    """A task failed (or its worker process died); the other tasks were cancelled."""


def run_tasks(fn: Callable[..., Any], tasks: Sequence[Any], jobs: int,
              describe: Callable[[Any], str] = repr) -> Iterator[Any]:  # fmt: skip
    """``fn(task)`` for each task, results in task order; on ``jobs`` processes when ``jobs > 1``.

    The first failure cancels what has not started and raises :class:`WorkerFailed` naming the task.
    """
    if jobs <= 1:
        for task in tasks:
            try:
                yield fn(task)
            except Exception as err:
                raise WorkerFailed(f"{describe(task)} failed: {type(err).__name__}: {err}") from err
        return
    # spawn, not fork: a parent that has used torch (a loaded model) deadlocks forked children
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"))
    try:
        futures = [pool.submit(fn, task) for task in tasks]
        for task, future in zip(tasks, futures, strict=True):
            try:
                yield future.result()
            except BrokenProcessPool as err:
                raise WorkerFailed(f"a worker process died while running {describe(task)}: {err}") from err
            except Exception as err:
                raise WorkerFailed(f"{describe(task)} failed in a worker process: "
                                   f"{type(err).__name__}: {err}") from err  # fmt: skip
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
