"""Outlive a parent process just long enough to end what it started.

``python -m quadrat_env.experiments.common.watchdog PID`` notes, twice a second, every process descended
from PID; once PID is gone (killed with SIGKILL, say), it kills the processes it last saw and exits.
The Ray path of ``quadrat_env.experiments.common.parallel`` starts one beside a local Ray instance,
whose agent processes otherwise outlive a killed driver (they watch the raylet, which stays a
zombie until it is reaped). Linux only (it reads /proc); elsewhere it exits at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path


def children_of(pids: set[int]) -> set[int]:
    """Every process below ``pids`` (read from /proc)."""
    parent_of = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                parent_of[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
    found, frontier = set(), set(pids)
    while frontier:
        frontier = {pid for pid, parent in parent_of.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def watch(parent: int, interval: float = 0.5) -> None:
    seen: set[int] = set()
    while alive(parent):
        seen = children_of({parent}) - {os.getpid()}
        time.sleep(interval)
    for pid in seen:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args in (["--help"], ["-h"]):
        print("usage: python -m quadrat_env.experiments.common.watchdog PID  (started by the worker pools)")
        return 0
    if len(args) != 1 or not args[0].isdigit():
        print("usage: python -m quadrat_env.experiments.common.watchdog PID", file=sys.stderr)
        return 2
    if sys.platform.startswith("linux"):
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C to the group is the parent's to handle
        watch(int(args[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
