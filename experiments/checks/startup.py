"""First use: seconds from ``import quadrat_env`` to the first step, in fresh processes.

    python -m quadrat_env.experiments.checks.startup                  # every ID, 3 runs each, about a minute

Each run is a new interpreter that imports gymnasium and quadrat_env, makes one ID, resets and steps
once. "cold": with an empty compiled-code cache (the first use on a machine: numba compiles what
that ID's reset and step need, nothing more); "warm": with the cache the cold run left. The median
of the runs is reported per ID.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

import quadrat_env
from quadrat_env.arguments import at_least, description_of
from quadrat_env.extras import command

PROBE = """
import time
start = time.perf_counter()
import gymnasium as gym, quadrat_env
env = gym.make({env_id!r})
_, info = env.reset(seed=0)
env.step(int(info["action_mask"].argmax()))
print(time.perf_counter() - start)
"""


def first_use(env_id: str, cache: str) -> float:
    """Seconds from the import to the first step in a fresh interpreter using ``cache``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    out = subprocess.run([sys.executable, "-c", PROBE.format(env_id=env_id)], capture_output=True, text=True,
                         env=env, check=True)  # fmt: skip
    return float(out.stdout.split()[-1])


def measure(env_id: str, runs: int) -> tuple[float, float]:
    """Median cold and warm first-use seconds of ``env_id`` over ``runs`` runs."""
    cold, warm = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as cache:
            cold.append(first_use(env_id, cache))
            warm.append(first_use(env_id, cache))
    return statistics.median(cold), statistics.median(warm)


@command
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=description_of(__doc__))
    p.add_argument("--runs", type=at_least(1), default=3, help="fresh processes per ID and cache state")
    p.add_argument(
        "--env", action="append", choices=quadrat_env.ENV_IDS, help="one ID (default: each game's own)"
    )
    args = p.parse_args(argv)
    print(f"first use, import to first step, median of {args.runs} runs ({os.cpu_count()} CPUs)")
    print("| ID | cold cache (s) | warm cache (s) |\n|---|---:|---:|")
    for env_id in args.env or quadrat_env.MAIN_IDS:
        cold, warm = measure(env_id, args.runs)
        print(f"| {env_id} | {cold:.2f} | {warm:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
