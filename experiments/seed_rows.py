"""One published row from many seeds: the interquartile mean and its 95% bootstrap interval (rliable).

    python -m quadrat_env.experiments.seed_rows runs/td_jax --env Zudecken32 --out results

Reads every finished run ``<RUNS>/<Name>-seed<k>/summary.json`` of one env (the JAX learners'
run folders: each seed's win rate on the benchmark's held-out deals, ``test_win_rate``), and
writes ``<out>/seeds-<learner>-<Name>.json`` and ``.md``: each seed's win rate, deals, moves and
seconds; their interquartile mean (IQM) with a 95% stratified bootstrap interval (rliable,
``--reps`` resamples, a fixed generator seed), the mean, the lowest and the highest; the device
and method the runs name. Where the exact optimum is given (``--optimum``), each figure also as
a share of it. ``<out>/seeds-<learner>-<Name>.png`` draws every seed's validation curve
(``curve.csv``), with the optimum where given; the record and the table also hold the seeds' mean,
lowest and highest validation win rate at each point. A row with fewer than 10 seeds says so in
its title.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from quadrat_env.arguments import description_of
from quadrat_env.extras import command, importing
from quadrat_env.journal import replace_all
from quadrat_env.registry import resolve_id
from quadrat_env.registry import short_name as env_name

with importing(__name__):
    from quadrat_env.experiments.common.runs import network_name  # PyYAML
    from rliable import library as rly

SEED_DIR = re.compile(r"^(?P<name>.+)-seed(?P<seed>\d+)$")
FULL = 10  # seeds a published row has
MAX_REPS = 100_000  # bootstrap resamples at most (2,000 give the intervals to a tenth of a point)
JOURNAL = ".seed-rows-journal.json"


def read_seeds(runs: Path, env_id: str) -> list[dict[str, Any]]:
    """Each finished seed's summary (sorted by seed); ``ValueError`` naming a folder that is not one."""
    rows = []
    for folder in sorted(runs.glob(f"{env_name(env_id)}-seed*")):
        found = SEED_DIR.match(folder.name)
        if not found or found["name"] != env_name(env_id) or not (folder / "summary.json").is_file():
            continue  # another env's folder, or a run not finished
        try:
            summary = json.loads((folder / "summary.json").read_text())
            rate, deals = float(summary["test_win_rate"]), int(summary["test_deals"])
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ValueError(
                f"{folder / 'summary.json'}: no test win rate ({type(err).__name__}: {err})"
            ) from None
        if not 0 <= rate <= 1 or deals < 1:  # NaN fails the first test too
            raise ValueError(f"{folder / 'summary.json'}: test win rate {rate!r} on {deals!r} deals is not "
                             "a win rate in [0, 1] on one deal or more")  # fmt: skip
        twin = [r for r in rows if r["seed"] == int(found["seed"])]
        if twin:
            raise ValueError(f"seed {int(found['seed'])} twice: {folder.name} and {twin[0]['folder']}; "
                             "keep one")  # fmt: skip
        rows.append({"seed": int(found["seed"]), "folder": folder.name, "test_win_rate": rate,
                     "test_deals": deals,
                     "moves": summary.get("moves"), "seconds": summary.get("seconds"),
                     "program_seeds": len(summary.get("program_seeds") or [0]),
                     "device": summary.get("device"), "method": summary.get("method"),
                     "network": network_name(summary) or "?",
                     "reward": reward(folder / "config.yml")})  # fmt: skip
    if not rows:
        raise ValueError(f"{runs} holds no finished run of {env_id} (<Name>-seed<k>/summary.json)")
    for row in rows:
        del row["folder"]
    return sorted(rows, key=lambda r: r["seed"])


def reward(config: Path) -> str:
    """The reward a run learned from: its config's ``env_kwargs`` ``reward_mode`` (default sparse)."""
    import yaml

    try:
        kwargs = (yaml.safe_load(config.read_text()) or {}).get("env_kwargs") or {}
    except (OSError, yaml.YAMLError, AttributeError):
        return "?"  # no readable config: the table says it does not know
    return str(kwargs.get("reward_mode", "sparse"))


def iqm(rates: list[float], reps: int = 2000, seed: int = 0) -> tuple[float, list[float]]:
    """The interquartile mean of the seeds' win rates and its 95% stratified bootstrap interval
    (rliable; ``reps`` resamples from a fixed generator seed, so the same rates give the same row)."""
    point, interval = _iqm(tuple(float(x) for x in rates), reps, seed)
    return point, list(interval)


def iqm_of(scores: np.ndarray) -> float:
    """rliable's ``aggregate_iqm`` (scipy's ``trim_mean`` of a quarter each side, over every score)
    in the same numpy steps, so to the bit (a test checks it): without scipy's array-API dispatch,
    which cost about 30 times the statistic in each of the bootstrap's thousands of resamples."""
    a = np.ravel(scores)
    low = int(0.25 * a.shape[0])
    high = a.shape[0] - low
    return np.mean(np.partition(a, (low, high - 1))[low:high])


@functools.lru_cache(maxsize=256)  # the benchmark's tables and the README's headline ask for the same rows
def _iqm(rates: tuple[float, ...], reps: int, seed: int) -> tuple[float, tuple[float, ...]]:
    scores = {"runs": np.asarray(rates, dtype=float).reshape(-1, 1)}  # (seeds, one task)
    before = np.random.get_state()  # rliable's bootstrap draws from numpy's global generator: seeded,
    np.random.seed(seed)  # then given back as it was, so a caller's own draws are not moved
    try:
        point, interval = rly.get_interval_estimates(scores, lambda s: np.array([iqm_of(s)]), reps=reps)
    finally:
        np.random.set_state(before)
    return float(point["runs"][0]), tuple(float(x) for x in interval["runs"][:, 0])


def aggregate(rows: list[dict[str, Any]], reps: int = 2000, seed: int = 0) -> dict[str, Any]:
    """IQM and its 95% stratified bootstrap interval over the seeds, with the mean and the range."""
    rates = np.array([r["test_win_rate"] for r in rows], dtype=float)
    point, interval = iqm(list(rates), reps, seed)
    return {"seeds": len(rows), "iqm": round(point, 5), "iqm_ci": [round(x, 5) for x in interval],
            "mean": round(float(rates.mean()), 5), "min": round(float(rates.min()), 5),
            "max": round(float(rates.max()), 5), "bootstrap_reps": reps}  # fmt: skip


def learned_summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The benchmark's rows of learned agents (``algo``, ``win_rate``), one summary a kind and env
    over its training seeds: the IQM with its 95% stratified bootstrap interval, the mean and spread."""
    out = []
    for env_id, algo in sorted({(r["env_id"], r["algo"]) for r in rows if "algo" in r}):
        mine = [r for r in rows if r.get("algo") == algo and r["env_id"] == env_id]
        rates = np.array([r["win_rate"] for r in mine], dtype=float)
        point, interval = iqm(list(rates))
        out.append({"env_id": env_id, "algo": algo, "learned_from": mine[0].get("learned_from"),
                    "seeds": len(rates), "iqm_win_rate": point, "iqm_ci": interval,
                    "mean_win_rate": float(rates.mean()),
                    "std_win_rate": float(rates.std(ddof=1)) if len(rates) > 1 else 0.0,
                    "min_win_rate": float(rates.min()), "max_win_rate": float(rates.max()),
                    "mean_illegal_rate": float(np.mean([r["illegal_rate"] for r in mine]))})  # fmt: skip
    return out


def validation(curves: list[Path]) -> list[dict[str, Any]]:
    """The seeds' validation win rates (``curve.csv``) at each point every one of them has (its
    moves within 1% of the first seed's): the mean, lowest and highest, so how far the row still
    rose at its end is in the record, not only in the plot."""
    points = [np.genfromtxt(c, delimiter=",", names=True, ndmin=1) for c in curves]
    out = []
    for moves in points[0]["moves"]:
        near = [np.flatnonzero(np.abs(p["moves"] - moves) <= 0.01 * moves) for p in points]
        if not all(len(k) for k in near):  # a seed validated elsewhere (other moves, or stopped sooner)
            continue
        at = [p[k[0]] for p, k in zip(points, near, strict=True)]  # each seed's row at this point
        rates = np.array([row["win_rate"] for row in at], dtype=float)
        out.append({"moves": int(max(row["moves"] for row in at)), "mean": round(float(rates.mean()), 5),
                    "min": round(float(rates.min()), 5), "max": round(float(rates.max()), 5)})  # fmt: skip
    return out


def table(title: str, rows: list[dict[str, Any]], result: dict[str, Any], optimum: float | None) -> str:
    def share(x: float) -> str:
        return f"{x:.2%}" + (f" ({x / optimum:.1%} of the optimum)" if optimum else "")

    low, high = result["iqm_ci"]
    head = [
        "| seed | held-out deals | win rate | moves | seconds | device |",
        "|---:|---:|---:|---:|---:|---|",
    ]
    spread = f"mean {result['mean']:.2%}, lowest {result['min']:.2%}, highest {result['max']:.2%}"
    lines = [f"# {title}", "", f"IQM {share(result['iqm'])}, 95% bootstrap interval [{low:.2%}, {high:.2%}]; "
             f"{spread}.", "", *head]  # fmt: skip
    lines += [f"| {r['seed']} | {r['test_deals']:,} | {r['test_win_rate']:.2%} | {r['moves'] or 0:,} | "
              f"{r['seconds']}{_together(r)} | {r['device']} |" for r in rows]  # fmt: skip
    if result.get("validation"):
        lines += ["", "Validation win rate (each seed's validation deals) at each point: the seeds' mean, "
                  "lowest and highest.", "", "| moves | mean | lowest–highest |",
                  "|---:|---:|---:|"]  # fmt: skip
        lines += [f"| {v['moves']:,} | {v['mean']:.2%} | {v['min']:.2%}–{v['max']:.2%} |"
                  for v in result["validation"]]  # fmt: skip
    return "\n".join(lines) + "\n"


def _together(row: dict[str, Any]) -> str:
    """Where a seed trained in one program with others, says so: its seconds are the program's."""
    n = row.get("program_seeds", 1)
    return f" ({n} seeds in one program)" if n > 1 else ""


@command
def _validation(curves: list[Path]) -> list[dict[str, Any]]:
    try:
        return validation(curves)
    except (OSError, ValueError, KeyError, IndexError, TypeError) as err:
        raise ValueError(f"a curve.csv of {curves[0].parent.parent} is not a validation curve "
                         f"(moves, win_rate, ...): {type(err).__name__}: {err}") from None  # fmt: skip


def _png(curves: list[Path], panel: str, optimum: float | None) -> bytes:
    """The seeds' validation curves as PNG bytes."""
    import tempfile

    from quadrat_env.experiments.common.plots import seed_curves

    with tempfile.TemporaryDirectory() as tmp:
        seed_curves({panel: curves}, Path(tmp) / "plot.png", {} if optimum is None else {panel: optimum})
        return (Path(tmp) / "plot.png").read_bytes()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=description_of(__doc__))
    p.add_argument("runs", type=Path, help="a learner's runs folder, e.g. runs/td_jax")
    p.add_argument("--env", required=True, help="env ID or short name")
    p.add_argument(
        "--optimum", type=float, help="the exact optimum's win rate, to show each figure as a share"
    )
    p.add_argument("--reps", type=int, default=2000, help="bootstrap resamples (default 2,000)")
    p.add_argument("--out", type=Path, default=Path("results"))
    p.add_argument("--overwrite", action="store_true", help="replace an earlier row's files")
    args = p.parse_args(argv)
    try:
        env_id = resolve_id(args.env)
        if not 100 <= args.reps <= MAX_REPS or (args.optimum is not None and not 0 < args.optimum <= 1):
            raise ValueError(f"--reps must be in 100..{MAX_REPS:,} and --optimum a win rate in (0, 1]")
        if args.out.exists() and not args.out.is_dir():
            raise ValueError(f"--out {args.out} is a file, not a folder")
        rows = read_seeds(args.runs, env_id)
        name = f"seeds-{args.runs.name}-{env_name(env_id)}"
        if not args.overwrite and any(
            (args.out / f"{name}{ext}").exists() for ext in (".json", ".md", ".png")
        ):
            raise ValueError(f"{args.out / name}.json exists; pass --overwrite to replace it")
        result = aggregate(rows, args.reps)
        curves = [args.runs / f"{env_name(env_id)}-seed{r['seed']}" / "curve.csv" for r in rows]
        if all(c.is_file() for c in curves):
            result["validation"] = _validation(curves)
    except ValueError as err:
        p.error(str(err))
    methods = sorted({f"{r['method']} ({r['reward']} reward, {r['network']})" for r in rows})
    few = "" if len(rows) >= FULL else f" (a published row has {FULL})"
    title = f"{', '.join(methods)} on {env_id}: {len(rows)} seeds{few}"
    record = {"title": title, "env_id": env_id, **result, "optimum": args.optimum, "rows": rows}
    changes = {args.out / f"{name}.json": json.dumps(record, indent=2).encode(),
               args.out / f"{name}.md": table(title, rows, result, args.optimum).encode()}  # fmt: skip
    if "validation" in result:
        about = "\n".join(textwrap.wrap(", ".join(methods), 60))  # a long one would run off the plot
        panel = f"{env_name(env_id)}, {len(rows)} seeds ({args.runs.name})\n{about}"
        changes[args.out / f"{name}.png"] = _png(curves, panel, args.optimum)
    replace_all(changes, args.out / JOURNAL)  # the three files together, or (stopped) none of them
    print(f"{title}: IQM {result['iqm']:.2%} [{result['iqm_ci'][0]:.2%}, {result['iqm_ci'][1]:.2%}] -> "
          f"{args.out / name}.json, .md")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
