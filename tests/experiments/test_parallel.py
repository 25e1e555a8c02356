"""Worker processes end with their parent, however the parent ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# Ctrl-C's usual handler, whatever the test runner inherited (a shell's background job ignores SIGINT).
PARENT = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
from quadrat_env.experiments.common.parallel import run_tasks
print("started", flush=True)
for _ in run_tasks(time.sleep, [120, 120, 120], jobs=2, ray=sys.argv[1] if len(sys.argv) > 1 else None):
    pass
"""


def children(pid: int) -> list[int]:
    """Live processes whose parent is ``pid`` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return stat[0] != "Z"


def wait_for(probe, seconds: float):  # noqa: ANN001, ANN201
    """``probe()`` until it gives something truthy or ``seconds`` pass; what it gave last."""
    deadline = time.monotonic() + seconds
    while not (value := probe()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return value


def gone(pids: list[int] | set[int], seconds: float) -> bool:
    """Whether every process in ``pids`` ends within ``seconds``."""
    return wait_for(lambda: not any(map(alive, pids)), seconds)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_workers_die_with_their_parent(sig):
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert parent.stdout.readline().strip() == b"started"

        def spawned() -> list[int]:  # the spawn workers (python -c ...), running their sleep tasks
            found = [c for c in children(parent.pid) if b"spawn" in Path(f"/proc/{c}/cmdline").read_bytes()]
            return found if len(found) == 2 else []

        workers = wait_for(spawned, 60)
        assert len(workers) == 2
        time.sleep(1.0)  # the workers are in their tasks
        os.kill(parent.pid, sig)
        parent.wait(timeout=30)
        assert gone(workers, 10), f"workers still running after {sig.name} to the parent"
    finally:
        parent.kill()
        parent.wait()


def descendants(pid: int) -> set[int]:
    found, frontier = set(), {pid}
    while frontier:
        frontier = {c for p in frontier for c in children(p)} - found
        found |= frontier
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_a_local_ray_instance_ends_with_its_driver(sig):
    pytest.importorskip("ray")
    parent = subprocess.Popen([sys.executable, "-c", PARENT, "local"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        assert parent.stdout.readline().strip() == b"started"

        def running() -> set[int]:  # Ray's processes, once two tasks run in its workers
            found = descendants(parent.pid)
            names = [Path(f"/proc/{p}/cmdline").read_bytes() for p in found if alive(p)]
            return found if sum(b"ray::_call" in n for n in names) >= 2 else set()

        started = wait_for(running, 120)
        assert len(started) >= 4, "the local Ray instance did not start its tasks"
        os.kill(parent.pid, sig)
        parent.wait(timeout=60)
        assert gone(started, 20), f"Ray processes still running after {sig.name} to the driver"
    finally:
        parent.kill()
        parent.wait()
