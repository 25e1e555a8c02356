"""An exact solve's searches in worker threads, so that the main thread keeps the clock (pauses
for checkpoints) and hears Ctrl-C; the searches themselves run compiled code without the GIL."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np
from quadrat_env.agents.zudecken.exact_memo import DONE, PAUSE, STOP


def run_searches(search: Callable[[int], float], threads: int, shared: np.ndarray,
                 pause_every: float | None) -> list[float]:  # fmt: skip
    """``search(t)`` for each thread ``t`` of ``threads``, all over one memo whose ``shared[STOP]``
    stops them: set to ``PAUSE`` every ``pause_every`` seconds. Returns each search's value (-1 if
    it was stopped). On Ctrl-C, wherever it lands, every search is stopped and every search that
    began has ended before the exception goes on, so that the memo is still when the checkpoint
    reads it. Each search says itself when it ends (``ended``): ``Thread.join`` cannot be trusted
    here, since a join that Ctrl-C interrupts marks a running thread as stopped (CPython 3.11), and
    a thread pool loses a thread whose start Ctrl-C interrupts; either let a search write the memo
    while the checkpoint read it (values one row off: a resumed solve ended on another value)."""
    go, lock, found = threading.Event(), threading.Lock(), [-1.0] * threads
    began, ended, cancelled = [False] * threads, [threading.Event() for _ in range(threads)], [False]

    def work(t: int) -> None:
        go.wait()
        with lock:  # no search begins once cancelled
            if cancelled[0]:
                return
            began[t] = True
        try:
            found[t] = search(t)
        finally:
            ended[t].set()

    try:
        for t in range(threads):
            threading.Thread(target=work, args=(t,), daemon=True).start()
        go.set()
        start = time.monotonic()
        while waiting := [e for e in ended if not e.is_set()]:
            waiting[0].wait(timeout=0.2)
            if pause_every is not None and time.monotonic() - start >= pause_every:
                shared[STOP] = PAUSE  # each search returns -1 within microseconds
    except BaseException:  # Ctrl-C: the searches stop at once, and none begins after
        with lock:
            cancelled[0] = True
        shared[STOP] = DONE
        go.set()
        for t in range(threads):
            if began[t]:
                ended[t].wait()
        raise
    return found
