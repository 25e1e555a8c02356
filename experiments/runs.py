"""Run folders: one run's files each, never silently mixed with or replaced by another run's."""

from __future__ import annotations

import shutil
from pathlib import Path


def claim_run_dir(run_dir: Path, overwrite: bool) -> None:
    """Make ``run_dir`` for a new run. A folder that exists and holds anything is refused
    (``ValueError``, the folder untouched) unless ``overwrite``, which deletes it first."""
    if run_dir.exists() and not run_dir.is_dir():
        raise ValueError(f"run folder {run_dir} is a file")
    if run_dir.is_dir() and any(run_dir.iterdir()):
        if not overwrite:
            raise ValueError(f"run folder {run_dir} holds an earlier run; pass --overwrite to delete it and "
                             "start again, or choose another --out or --seed")  # fmt: skip
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
