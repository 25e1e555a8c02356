"""Ray runs the same tasks as local processes, deal for deal (a local 2-CPU Ray instance).

Each Ray run is a process of its own, as each command is (``in_own_process``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import in_own_process
from quadrat_env.experiments import benchmark
from quadrat_env.experiments.common.parallel import WorkerFailed, run_tasks

MODELS = Path(__file__).resolve().parents[2] / "experiments" / "models"
SMALL = ["--deals", "60", "--planner-deals", "4", "--planner-samples", "4", "--env", "quadrat_env/Quadrat-v0",
         "--env", "quadrat_env/Zudecken-v0", "--no-plots", "--no-progress"]  # fmt: skip


def rows(folder) -> list[dict]:
    """The benchmark rows without their timings."""
    data = json.loads((folder / "benchmark.json").read_text())
    return [{k: v for k, v in r.items() if k != "seconds"} for r in data["rows"]]


def test_a_small_benchmark_on_ray_equals_the_local_run(tmp_path):
    # two of the committed models (a policy network, an afterstate network) beside the fixed players:
    # each kind of task once; the other 44 models' rows would add Ray's loading, not coverage
    models = tmp_path / "models"
    models.mkdir()
    for name in ("Quadrat-ppo.zip", "Zudecken-td_ppo.zip"):
        shutil.copy(MODELS / name, models / name)
    small = [*SMALL, "--models", str(models)]
    assert benchmark.main([*small, "--out", str(tmp_path / "local")]) == 0
    ray_run = [*small, "--out", str(tmp_path / "ray"), "--jobs", "2", "--ray"]
    assert in_own_process(benchmark.main, ray_run) == 0
    assert rows(tmp_path / "ray") == rows(tmp_path / "local")
    assert {"ppo", "td_ppo", "planner"} <= {r["agent"] for r in rows(tmp_path / "local")}
    for csv in (tmp_path / "local" / "deals").glob("*.csv"):  # every agent's per-deal outcomes
        assert (tmp_path / "ray" / "deals" / csv.name).read_text() == csv.read_text()


def describe(task: str) -> str:
    return f"task {task}"


def run_failing_tasks() -> tuple[str, bool]:
    """The error of a Ray run whose second task fails, and whether it chains another error."""
    try:  # int: a function Ray's workers can import (this test module is not importable there)
        list(run_tasks(int, ["1", "x", "3"], 2, describe=describe, ray="local"))
    except WorkerFailed as err:
        return str(err), err.__cause__ is not None or err.__context__ is not None
    return "no error", False


def test_a_failing_ray_task_is_one_clear_error():
    message, chained = in_own_process(run_failing_tasks)
    assert message.startswith("task x failed in a Ray task: ValueError: invalid literal")
    assert not chained  # a chained Ray error's frames hold object refs, which must not outlive the driver


def test_a_training_grid_on_ray_equals_the_local_run(tmp_path):
    """Each grid run trains on one torch thread, so the weights match wherever it ran; the files come
    back to this process (no shared disk), laid out as ``train`` lays them out."""
    import torch
    from quadrat_env.agents.safe_load import load_model
    from quadrat_env.experiments import grid

    argv = ["--envs", "Quadrille", "--algos", "maskable_ppo", "ppo", "--seeds", "0", "--timesteps", "1024",
            "--n-envs", "8"]  # fmt: skip
    assert grid.main([*argv, "--jobs", "1", "--out", str(tmp_path / "local")]) == 0
    assert in_own_process(grid.main, [*argv, "--jobs", "2", "--ray", "--out", str(tmp_path / "ray")]) == 0
    for algo in ("maskable_ppo", "ppo"):
        folders = [tmp_path / where / algo / "Quadrille-seed0" for where in ("local", "ray")]
        assert all((f / "config.yml").is_file() and (f / "monitor").is_dir() for f in folders)
        a, b = (
            load_model(f / "model.zip", algo, "quadrat_env/Quadrille-v0").policy.state_dict() for f in folders
        )
        assert all(torch.equal(a[k], b[k]) for k in a)
