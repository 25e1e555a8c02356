"""Stop the exact solver with Ctrl-C many times and resume it: how many stops resume to the exact value.

    python -m quadrat_env.experiments.zudecken.exact_stops --trials 60   # about 4 minutes (6 ranks)

Each trial starts ``exact_values --ranks R R`` with a checkpoint every 0.12 s, sends SIGINT (Ctrl-C)
right after its second checkpoint, checks that the saved entries' values are the uninterrupted
solve's for their keys, resumes the solve in this process and compares the value to the bit. A
flaky race between the checkpoint and a search still writing the memo shows here as a few trials in
a hundred, where the test suite's one stop rarely meets it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from quadrat_env.agents.zudecken.exact import ExactSolver
from quadrat_env.experiments.zudecken import exact_values

from quadrat_env.arguments import at_least, description_of
from quadrat_env.extras import command

# The solve with Ctrl-C as at a terminal, even where this process runs with SIGINT ignored (a
# background job of a script inherits SIG_IGN, and Python then leaves Ctrl-C ignored); the tests use it too.
CTRL_C = (
    "import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "runpy.run_module('quadrat_env.experiments.zudecken.exact_values', run_name='__main__')"
)


def trial(ranks: int, folder: Path, truth: dict[int, float], exact: str) -> tuple[int, bool]:
    """One stop and resume: (entries saved with a wrong value, whether the resumed value is exact)."""
    common = ["--ranks", str(ranks), str(ranks), "--threads", "1", "--out", str(folder / "results"),
              "--cache", str(folder / "cache")]  # fmt: skip
    run = subprocess.Popen([sys.executable, "-c", CTRL_C, *common, "--checkpoint-minutes", "0.002"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    saved = folder / "cache" / "exact" / f"{ranks}-cleared-groups"
    while not (
        (saved / "meta.json").is_file() and json.loads((saved / "meta.json").read_text())["generation"] >= 1
    ):
        time.sleep(0.05)
    os.kill(run.pid, signal.SIGINT)
    run.communicate(timeout=120)
    generation = json.loads((saved / "meta.json").read_text())["generation"]
    keys, vals = np.load(saved / f"keys-{generation}.npy"), np.load(saved / f"vals-{generation}.npy")
    wrong = sum(truth.get(int(k)) != float(v) for k, v in zip(keys[:, 0], vals, strict=True))
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):  # its lines
        exact_values.main(common)
    result = json.loads((folder / "results" / "zudecken_exact.json").read_text())["ranks"][str(ranks)]
    return wrong, result["hex"] == exact


@command
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=description_of(__doc__))
    p.add_argument("--trials", type=at_least(1), default=60)
    p.add_argument("--ranks", type=at_least(4), default=6, help="ranks a suit (6: about 1 s a solve)")
    args = p.parse_args(argv)
    solver = ExactSolver(args.ranks, lean=True, threads=1)
    exact = solver.win_rate().hex()
    used = solver.keys[:, 0] != -1
    truth = dict(zip(solver.keys[used, 0].tolist(), solver.vals[used].tolist(), strict=True))
    good = 0
    for i in range(args.trials):
        with tempfile.TemporaryDirectory() as folder:
            wrong, same = trial(args.ranks, Path(folder), truth, exact)
        good += same and not wrong
        print(f"stop {i + 1}: {wrong} entries saved with a wrong value; resumed to "
              f"{'the exact value' if same else 'ANOTHER value'}", flush=True)  # fmt: skip
    print(f"{good} of {args.trials} stops resumed to the exact value with every saved entry right")
    return 0 if good == args.trials else 1


if __name__ == "__main__":
    sys.exit(main())
