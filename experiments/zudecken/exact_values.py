"""The exact optimum of Zudecken for packs of 4 to 13 ranks, by the lean exact search, resumable.

    python -m quadrat_env.experiments.zudecken.exact_values --ranks 4 13 --threads 2

Each pack is solved by ``ExactSolver(n, lean=True)`` (positions with at most two upcards memoised,
16 bytes each). Every ``--checkpoint-minutes`` the searches pause and the memo is saved to
``<cache>/exact/<n>-<win>-<cover>/`` (``agents.zudecken.exact_checkpoint``); so do Ctrl-C and SIGTERM.
Run again, the command skips the packs already in the results file and resumes the others from
their checkpoint (a checkpoint of other code is not used: that pack starts over). Results:
``results/zudecken_exact.json`` (ranks -> value to 12 digits, positions, seconds over every part,
peak memory, command, the search code's fingerprint) and its log; with 13 ranks, the exact 52-card
optimum also goes into ``results/zudecken_optimum.json``.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

from quadrat_env.agents.zudecken import exact_checkpoint
from quadrat_env.agents.zudecken.exact import MAX_RANKS, MIN_RANKS, ExactSolver, code_fingerprint
from quadrat_env.agents.zudecken.exact_parts import usable_cores
from quadrat_env.agents.zudecken.optimal import cache_dir

from quadrat_env.arguments import at_least, description_of
from quadrat_env.core.checks import check_memory
from quadrat_env.extras import command
from quadrat_env.files import atomic_write, exclusive_folder

#: Memo slots a pack's lean solve is given at the start (a power of two, filled to at most 3/4 by
#: the positions measured: 5,212 at 4 ranks ... 1.63M at 8; 12 and 13 ranks extrapolated).
SLOTS = {4: 1 << 16, 5: 1 << 16, 6: 1 << 18, 7: 1 << 20, 8: 1 << 22, 9: 1 << 23, 10: 1 << 25, 11: 1 << 26,
         12: 1 << 28, 13: 1 << 29}  # fmt: skip
#: Each thread's cache of full tables' values (24 bytes a slot): what fits beside the memo (11 ranks
#: within 1.5 GB in all).
CACHE_SLOTS = {n: 1 << 20 for n in range(4, 11)} | {11: 1 << 21, 12: 1 << 24, 13: 1 << 26}


def memory_needed(n: int, threads: int) -> int:
    """Bytes a pack's lean solve takes at the least: its memo as reserved (16 bytes a slot) and each
    thread's cache of full tables (24 bytes a slot)."""
    return SLOTS[n] * 16 + threads * CACHE_SLOTS[n] * 24


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def solve(n: int, threads: int, every: float, folder: Path, say: Any) -> dict[str, Any]:
    """One pack's value, resumed from ``folder``'s checkpoint if it holds this solve's."""
    solver = ExactSolver(n, lean=True, threads=threads, cache_slots=CACHE_SLOTS[n])
    solver.reserve(SLOTS[n])
    meta = exact_checkpoint.restore(solver, folder) or {}
    before, peak, start = (
        float(meta.get("seconds", 0.0)),
        float(meta.get("peak_mb", 0.0)),
        time.perf_counter(),
    )
    if meta:
        say(f"{n} ranks: resumed from {folder} ({solver.positions:,} positions, {before:.0f} s before)")

    def progress() -> dict[str, Any]:
        return {
            "seconds": round(before + time.perf_counter() - start, 1),
            "peak_mb": round(max(peak, peak_mb())),
        }

    def checkpoint() -> None:
        exact_checkpoint.save(solver, folder, progress())
        done = progress()
        say(f"{n} ranks: {solver.positions:,} positions, {done['seconds']:.0f} s, {done['peak_mb']} MB; "
            "checkpoint saved")  # fmt: skip

    value = solver.value(0, solver.all_cards, threads, pause_every=every, on_pause=checkpoint)
    return {"value": float(f"{value:.12f}"), "digits": f"{value:.12f}", "hex": value.hex(),
            "positions": solver.positions, **progress(), "threads": threads,
            "resumed": bool(meta)}  # fmt: skip


def record(out: Path, results: dict[str, Any], log: list[str]) -> None:
    """Writes the results and the log: the earlier runs' lines (``log`` starts with them), then this run's."""
    atomic_write(out / "zudecken_exact.json", json.dumps(results, indent=2) + "\n")
    atomic_write(out / "zudecken_exact.log", "\n".join(log) + "\n")
    if "13" in results["ranks"]:  # the 52-card optimum, beside the bracket it replaces
        path = out / "zudecken_optimum.json"
        optimum = json.loads(path.read_text()) if path.is_file() else {"env_id": "quadrat_env/Zudecken-v0"}
        solved = results["ranks"]["13"]
        optimum["exact"] = solved["value"]
        optimum["exact_solve"] = {**solved, "log": _shown(out / "zudecken_exact.log")}
        atomic_write(path, json.dumps(optimum, indent=2) + "\n")


def _shown(path: Path) -> str:
    """The path from the working folder when it is inside it (a committed file names no machine's folders)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def earlier(out: Path) -> tuple[dict[str, Any], list[str]]:
    """The packs earlier runs solved, each naming its command and the fingerprint of the search
    that solved it (a pack solved by other code is kept: a faster search finds the same values, and
    the fingerprint tells which code found each), and their log lines."""
    path, log_path = out / "zudecken_exact.json", out / "zudecken_exact.log"
    results = json.loads(path.read_text()) if path.is_file() else {}
    ranks = results.get("ranks", {})
    for done in ranks.values():  # a file from before each pack had its own: the file's
        done.setdefault("command", results.get("command"))
        done.setdefault("code", results.get("code"))
    return {"ranks": ranks}, log_path.read_text().splitlines() if ranks and log_path.is_file() else []


class Stopped(KeyboardInterrupt):
    """SIGTERM, raised in the main thread as Ctrl-C is: the solve checkpoints on its way out."""


def _terminate(signum: int, frame: Any) -> None:
    raise Stopped


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description_of(__doc__))
    p.add_argument("--ranks", type=int, nargs=2, default=(4, 13), metavar=("FIRST", "LAST"))
    p.add_argument("--threads", type=at_least(1), default=usable_cores())
    p.add_argument("--checkpoint-minutes", type=float, default=10.0)
    p.add_argument("--out", type=Path, default=Path("results"))
    p.add_argument(
        "--cache", type=Path, default=None, help="checkpoints' parent folder (default: the user cache)"
    )
    return p


@command
def main(argv: list[str] | None = None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    first, last = args.ranks
    if not MIN_RANKS <= first <= last <= MAX_RANKS or first < min(SLOTS):
        p.error(f"--ranks must be FIRST LAST with {min(SLOTS)} <= FIRST <= LAST <= {MAX_RANKS}")
    if not args.checkpoint_minutes > 0:
        p.error("--checkpoint-minutes must be > 0")
    if args.out.exists() and not args.out.is_dir():
        p.error(f"--out {args.out} is a file, not a folder")
    line = "python -m quadrat_env.experiments.zudecken.exact_values " + " ".join(argv or sys.argv[1:])
    try:
        check_memory(memory_needed(last, args.threads), f"{last} ranks on {args.threads} threads",
                     "solve fewer ranks (--ranks FIRST LAST) or use fewer --threads")  # fmt: skip
    except ValueError as err:
        p.error(str(err))
    before = signal.signal(signal.SIGTERM, _terminate)
    try:
        with exclusive_folder(args.out):  # one writer of the results at a time
            return solve_all(args, line)
    except ValueError as err:  # another run holds a folder, a damaged checkpoint: nothing recorded
        p.error(str(err))
    except OSError as err:  # a full disk, a read-only folder: what was recorded before stays
        print(f"exact_values: {err.strerror or err}: {err.filename or ''}; the packs recorded before are "
              "kept, a checkpoint saved before is resumed by the same command", file=sys.stderr)  # fmt: skip
        return 1
    except KeyboardInterrupt as stop:  # the solve saved a checkpoint on its way out
        how = "SIGTERM" if isinstance(stop, Stopped) else "Ctrl-C"
        print(f"exact_values: stopped by {how}; {stop.args[0] if stop.args else ''}the same command resumes",
              file=sys.stderr)  # fmt: skip
        return 128 + (signal.SIGTERM if isinstance(stop, Stopped) else signal.SIGINT)
    finally:
        signal.signal(signal.SIGTERM, before)


def solve_all(args: argparse.Namespace, line: str) -> int:
    """Each pack of ``--ranks`` not yet in the results, recorded as it is solved."""
    results, log = earlier(args.out)
    log.append(line)

    def say(text: str) -> None:
        log.append(text)
        print(text, file=sys.stderr, flush=True)

    for n in range(args.ranks[0], args.ranks[1] + 1):
        if str(n) in results["ranks"]:
            if results["ranks"][str(n)]["code"] != code_fingerprint():
                say(f"{n} ranks: kept as solved by other code ({results['ranks'][str(n)]['code']})")
            continue
        folder = (args.cache or cache_dir()) / "exact" / f"{n}-cleared-groups"
        try:
            with exclusive_folder(folder):  # one solve of a pack at a time in a cache
                solved = solve(n, args.threads, args.checkpoint_minutes * 60, folder, say)
        except KeyboardInterrupt as stop:
            raise type(stop)(f"checkpoint in {folder}: ") from None
        done = results["ranks"][str(n)] = {**solved, "command": line, "code": code_fingerprint()}
        say(f"{n} ranks: optimal win rate {done['digits']}, {done['positions']:,} positions, "
            f"{done['seconds']:.0f} s on {args.threads} threads, peak {done['peak_mb']} MB")  # fmt: skip
        results["ranks"] = dict(sorted(results["ranks"].items(), key=lambda kv: int(kv[0])))
        record(args.out, results, log)
        shutil.rmtree(folder, ignore_errors=True)  # recorded: its checkpoint (GBs at 13 ranks) is done with
    print(f"wrote {args.out / 'zudecken_exact.json'}: ranks {', '.join(results['ranks'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
