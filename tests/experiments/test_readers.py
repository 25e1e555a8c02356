"""Readers of run files take only data: a writer's temporary files are skipped, whole or half-written,
and a damaged log is one warning, not a crash after the work is done."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from quadrat_env.experiments.common import plots  # noqa: E402

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
    (tmp_path / "Zudecken-ppo.zip").write_bytes(b"")  # a committed model: the plot draws its Monitor log
    root = tmp_path / "monitor"
    shutil.copytree(MONITOR, root / "Zudecken-ppo")
    with gzip.open(root / "Zudecken-ppo" / "9.monitor.csv.gz", "wb") as f:
        f.write(b'#{"t_start": 0}\nr,l,t\n' * 1000)
    (root / "Zudecken-ppo" / "9.monitor.csv.gz").write_bytes(
        (root / "Zudecken-ppo" / "9.monitor.csv.gz").read_bytes()[:60]
    )
    with pytest.warns(UserWarning, match="9.monitor.csv.gz: skipped"):
        plots.learning_curves(tmp_path, tmp_path / "curves.png")
    assert (tmp_path / "curves.png").stat().st_size > 0


def simulated_monitor(folder: Path, n_envs: int, steps: int, seed: int = 0) -> float:
    """A Monitor log of n_envs envs stepped together by a policy that wins 30% of its games, and
    whose won games are long (16 moves) and lost ones short (1-3 moves); returns the true win rate."""
    rng = np.random.default_rng(seed)
    rows, left, outcome, length = [], np.zeros(n_envs, int), np.zeros(n_envs, bool), np.zeros(n_envs, int)
    for step in range(steps):
        for env in np.flatnonzero(left == 0):  # a new game
            outcome[env] = rng.random() < 0.3
            length[env] = left[env] = 16 if outcome[env] else rng.integers(1, 4)
        left -= 1
        rows += [
            f"0.0,{length[e]},{step * 0.001 + e * 1e-7:.7f},{outcome[e]}" for e in np.flatnonzero(left == 0)
        ]
    folder.mkdir(parents=True)
    (folder / "0.monitor.csv").write_text('#{"t_start": 0}\nr,l,t,won\n' + "\n".join(rows) + "\n")
    return 0.3


def test_learning_curves_have_no_start_artefact(tmp_path):
    models = tmp_path / "models"
    true = simulated_monitor(models / "monitor" / "Quadrat-ppo", n_envs=64, steps=400)
    (models / "configs").mkdir()
    (models / "configs" / "Quadrat-ppo-seed0.yml").write_text("n_envs: 64\n")
    [(label, steps, rate)] = plots.model_curves(models, "Quadrat-ppo", window=200)
    assert "from the reward" in label and len(rate) > 20
    assert np.abs(rate / 100 - true).max() < 0.12  # by the order games ended, the start reads 0-10%
    ends, won = plots._episodes(models / "monitor" / "Quadrat-ppo")
    assert won[:200].mean() < 0.15  # the artefact the start order removes
