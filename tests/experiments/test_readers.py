"""Readers of run files take only data: a writer's temporary files are skipped, whole or half-written,
and a damaged log is one warning, not a crash after the work is done."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from quadrat_env.experiments import plots  # noqa: E402

from quadrat_env.files import data_files  # noqa: E402

MONITOR = Path(__file__).resolve().parents[2] / "experiments" / "models" / "monitor" / "Zudecken-ppo"


def test_temporary_files_are_not_data(tmp_path):
    run = tmp_path / "Zudecken-ppo"
    shutil.copytree(MONITOR, run)
    steps, won = plots._episodes(run)
    first = next(iter(data_files(run, "*.monitor.csv*")))
    shutil.copy(first, run / f".{first.stem}.tmpab12{first.suffix}")  # a leftover whole temporary copy
    (run / ".0.monitor.csv.tmpcd34.gz").write_bytes(first.read_bytes()[:100])  # a half-written one
    assert [p.name for p in data_files(run, "*.monitor.csv*")] == sorted(p.name for p in MONITOR.iterdir())
    again_steps, again_won = plots._episodes(run)
    assert len(again_won) == len(won) and (again_steps == steps).all()


def test_a_damaged_log_is_one_warning_and_the_plot_is_made(tmp_path):
    root = tmp_path / "monitor"
    shutil.copytree(MONITOR, root / "Zudecken-ppo")
    with gzip.open(root / "Zudecken-ppo" / "9.monitor.csv.gz", "wb") as f:
        f.write(b'#{"t_start": 0}\nr,l,t\n' * 1000)
    (root / "Zudecken-ppo" / "9.monitor.csv.gz").write_bytes(
        (root / "Zudecken-ppo" / "9.monitor.csv.gz").read_bytes()[:60]
    )
    with pytest.warns(UserWarning, match="9.monitor.csv.gz: skipped"):
        plots.learning_curves(root, tmp_path / "curves.png")
    assert (tmp_path / "curves.png").stat().st_size > 0
