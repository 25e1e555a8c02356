"""Seeds trained elsewhere as the ladder's learner cells: the GPU script's ``td_jax`` and ``ppo_jax``
runs (``scripts/gpu_rows.sh`` with ``ROWS="td_jax:Zudecken40 ppo_mlp:Zudecken40 ..."``).

    mkdir -p runs/gpu_ladder && tar xzf runs.tar.gz -C runs/gpu_ladder   # the GPU script's archive
    quadrat ladder --import-runs runs/gpu_ladder --update-docs

A finished run (``<kind>/<Name>-seed<k>/`` with ``summary.json``, ``config.yml`` and
``weights.npz``) becomes a seed of the ladder's learner of the same algorithm and network: a
``td_jax`` run one of TD(0)'s, a ``ppo_jax`` run with the MLP one of PPO's. Its budget must be the
ladder's for the rung (else its cell would be left out of the table). It is copied into the work
folder (``imported/<kind>/``), exported to ``model.zip`` there where it has none (the machine that
trained it may lack SB3), and plays the rung's held-out deals here, as the ladder's own seeds do.
Its cell says where it trained (``trained_on``: the run's device) and keeps its validation curve.
A run that does not fit is one line saying why; nothing of it is kept.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from quadrat_env.experiments.zudecken import ladder_learners as learners
from quadrat_env.experiments.zudecken.ladder_curves import read_curve

from quadrat_env.files import copy_folder
from quadrat_env.registry import short_name

#: A run's kind (its folder in the archive) -> the ladder's learner it is a seed of.
KINDS = {"td_jax": "td", "ppo_jax": "ppo"}
FILES = ("summary.json", "config.yml", "weights.npz")


def finished_runs(folder: Path) -> list[Path]:
    """The finished runs anywhere under ``folder``: ``<kind>/<Name>-seed<k>/`` holding every one of
    ``FILES`` (the GPU script keeps the ladder's PPO runs in ``ladder/ppo_jax/``)."""
    runs = [p for kind in KINDS for p in sorted(folder.rglob(f"{kind}/*-seed*")) if p.is_dir()]
    return [p for p in runs if all((p / f).is_file() for f in FILES)]


def fits(run: Path, rungs: dict[str, int], args: argparse.Namespace) -> tuple[str, str, int]:
    """(learner, env ID, seed) of a run the ladder can take; else ``ValueError`` saying why not."""
    import yaml

    try:
        config = yaml.safe_load((run / "config.yml").read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ValueError(f"its config.yml is not YAML ({type(err).__name__})") from None
    if not isinstance(config, dict) or not {"env_id", "seed", "n_moves"} <= set(config):
        raise ValueError("its config.yml names no env_id, seed and n_moves")
    env_id, learner = config["env_id"], KINDS[run.parent.name]
    if env_id not in rungs:
        raise ValueError(f"{env_id} is not a rung the ladder plays (rungs 8 and 13 are the benchmark's)")
    if config.get("env_kwargs"):
        raise ValueError(f"it changed the rung's rules ({config['env_kwargs']})")
    if learner == "ppo" and config.get("features"):
        raise ValueError(f"a PPO run with the {config['features']} network: the ladder's PPO is the MLP")
    want = learners.budget(learner, env_id, args)
    if config["n_moves"] != want:
        raise ValueError(f"it trained {config['n_moves']:,} moves, the ladder's budget there is {want:,}")
    return learner, env_id, int(config["seed"])


def copied(run: Path, work: Path) -> Path:
    """The run's copy in the work folder (made once; a different run of the same name is refused)."""
    into = work / "imported" / run.parent.name / run.name
    if into.is_dir():
        if (into / "summary.json").read_bytes() != (run / "summary.json").read_bytes():
            raise ValueError(f"{into} holds another run of that name: move one of them away")
        return into
    copy_folder(run, into)
    return into


def cell_file(work: Path, env_id: str, learner: str, seed: int, kind: str) -> Path:
    """An imported seed's cell: beside the ladder's own seeds' (read with them), named by its kind,
    so a GPU seed 0 and this machine's seed 0 (two runs) are two cells."""
    return work / "cells" / f"{short_name(env_id)}-{learner}-seed{seed}-{kind}.json"


def import_run(run: Path, rungs: dict[str, int], args: argparse.Namespace, keep: Any) -> None:
    """One run's cell, played on the rung's held-out deals (skipped if kept already)."""
    learner, env_id, seed = fits(run, rungs, args)
    path = cell_file(args.work, env_id, learner, seed, run.parent.name)
    if path.is_file() and json.loads(path.read_text(encoding="utf-8")).get("episodes") == args.deals:
        return
    folder = copied(run, args.work)
    if not (folder / "model.zip").is_file():
        from quadrat_env.experiments import ppo_jax, td_jax

        (td_jax if learner == "td" else ppo_jax).export_model(folder)
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    cell = learners.cell(learner, env_id, rungs[env_id], seed, args, folder)
    cell.update({"trained_on": summary.get("device", "unknown"), "method": summary.get("method", "")})
    curve = read_curve(folder)
    if curve is not None:
        cell["curve"] = curve
    keep(path, cell)


def import_all(folders: list[Path], rungs: dict[str, int], args: argparse.Namespace,
               keep: Any) -> list[str]:  # fmt: skip
    """Every finished run under ``folders`` as a cell (``keep(path, cell)``); one line a run that
    could not be taken."""
    failed = []
    for folder in folders:
        if not folder.is_dir():
            raise ValueError(f"--import-runs {folder}: no such folder")
        runs = finished_runs(folder)
        if not runs:
            failed.append(f"{folder}: no finished td_jax or ppo_jax run (<kind>/<Name>-seed<k>/ with "
                          f"{', '.join(FILES)})")  # fmt: skip
        for run in runs:
            try:
                import_run(run, rungs, args, keep)
            except (ValueError, OSError) as err:
                failed.append(f"{run}: not imported: {err}")
    return failed
