"""A stopped training run continues from its checkpoint to exactly the model of an uninterrupted run."""

from __future__ import annotations

import csv
import json
import signal
import subprocess
import sys
import time

import pytest
import torch

pytest.importorskip("sb3_contrib")

from quadrat_env.experiments import train  # noqa: E402
from quadrat_env.experiments.common import checkpoint  # noqa: E402

ZU = "quadrat_env/Zudecken-v0"


def argv(algo: str, vec: str, out) -> list[str]:  # noqa: ANN001
    return ["--env", ZU, "--algo", algo, "--seed", "1", "--timesteps", "1024", "--n-envs", "4", "--vec-env",
            vec, "--eval-every", "256", "--eval-deals", "10", "--no-progress", "--checkpoint-minutes", "0",
            "--out", str(out)]  # fmt: skip


@pytest.mark.parametrize(("algo", "vec"), [("maskable_ppo", "native"), ("ppo", "dummy")])
def test_an_interrupted_run_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch, algo, vec):
    from quadrat_env.agents.safe_load import load_model

    init = train.Checkpointer.__init__

    def slow_start(self, *args):  # noqa: ANN001, ANN002, ANN202 - as if the model took long to build:
        time.sleep(0.3)  # the Monitors' clocks start well before the run's
        init(self, *args)

    monkeypatch.setattr(train.Checkpointer, "__init__", slow_start)
    assert train.main(argv(algo, vec, tmp_path / "a")) == 0
    at_boundary = train.Checkpointer.at_boundary

    def ctrl_c_at_step_400(self, model):  # noqa: ANN001, ANN202 - as if Ctrl-C came mid-run
        if model.num_timesteps >= 400 and not self.signal:
            signal.raise_signal(signal.SIGINT)
        at_boundary(self, model)

    monkeypatch.setattr(train.Checkpointer, "at_boundary", ctrl_c_at_step_400)
    assert train.main(argv(algo, vec, tmp_path / "b")) == 128 + signal.SIGINT
    run_b = tmp_path / "b" / algo / "Zudecken-seed1"
    assert (run_b / "checkpoint.npz").is_file() and not (run_b / "model.zip").exists()
    monkeypatch.setattr(train.Checkpointer, "at_boundary", at_boundary)
    first_part = checkpoint.load(run_b / "checkpoint.npz")[0]["seconds"]
    assert train.main([*argv(algo, vec, tmp_path / "b"), "--resume"]) == 0
    summary = json.loads((run_b / "summary.json").read_text())  # the whole run, both parts
    assert summary["steps"] == 1024 and summary["seconds"] > first_part > 0
    run_a = tmp_path / "a" / algo / "Zudecken-seed1"
    a, b = (load_model(r / "model.zip", algo, ZU).policy.state_dict() for r in (run_a, run_b))
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not (run_b / "checkpoint.npz").exists()
    # the same curve points and logged episodes, but for their wall-clock columns
    logs = [("curve.csv", 1, 1)] + [(p.relative_to(run_a), 2, 2) for p in (run_a / "monitor").glob("*.csv")]
    for name, header, clock in logs:
        rows_a, rows_b = ([r[:clock] + r[clock + 1 :] for r in list(csv.reader((run / name).open()))[header:]]
                          for run in (run_a, run_b))  # fmt: skip
        assert rows_a == rows_b and len(rows_a) > 1, name
    for log in (run_b / "monitor").glob("*.csv"):  # the time column goes on across the resume
        times = [float(r[2]) for r in list(csv.reader(log.open()))[2:]]
        assert times == sorted(times), log


def test_resume_refuses_other_settings_a_finished_run_and_no_checkpoint(tmp_path, capsys):
    args = argv("ppo", "native", tmp_path)
    with pytest.raises(SystemExit):
        train.main([*args, "--resume"])
    assert "no run to continue" in capsys.readouterr().err
    assert train.main(args) == 0
    refusals = (
        (["--resume"], "has finished"),
        (["--resume", "--timesteps", "2048"], "differ from the run's config.yml: n_timesteps"),
    )
    for extra, message in refusals:
        with pytest.raises(SystemExit) as exc:
            train.main([*args, *extra])
        assert exc.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals")
def test_sigterm_saves_a_checkpoint_and_exits_143(tmp_path):
    cmd = [sys.executable, "-m", "quadrat_env.experiments.train", "--env", ZU, "--algo", "ppo", "--timesteps",
           "100000000", "--n-envs", "4", "--vec-env", "native", "--no-progress", "--checkpoint-minutes", "60",
           "--out", str(tmp_path)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run = tmp_path / "ppo" / "Zudecken-seed0"
    deadline = time.monotonic() + 120
    log = run / "monitor" / "0.monitor.csv"
    while not (log.is_file() and len(log.read_text().splitlines()) > 2) and time.monotonic() < deadline:
        time.sleep(0.2)  # training is under way once the Monitor log holds an episode
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err[-2000:]
    assert "stopped by SIGTERM" in err and "--resume" in err and "Traceback" not in err
    assert (run / "checkpoint.npz").is_file()


def test_a_checkpoint_with_a_forged_header_is_refused_before_any_allocation(tmp_path):
    """A checkpoint's array header claiming 10^11 rows: one ValueError, not a 1.6 TB allocation."""
    import io
    import zipfile

    import numpy as np

    checkpoint.save(tmp_path / "c.npz", {"steps": 1}, {"weights": np.zeros((4, 2))})
    with zipfile.ZipFile(tmp_path / "c.npz") as z:
        members = {name: z.read(name) for name in z.namelist()}
    forged = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        forged, {"descr": "<f8", "fortran_order": False, "shape": (10**11, 2)}
    )
    members["weights.npy"] = forged.getvalue() + np.zeros((4, 2)).tobytes()
    with zipfile.ZipFile(tmp_path / "c.npz", "w") as z:
        for name, body in members.items():
            z.writestr(name, body)
    with pytest.raises(ValueError, match="not a readable checkpoint.*claims shape"):
        checkpoint.load(tmp_path / "c.npz")


def test_a_crafted_training_checkpoint_is_one_line_and_touches_no_file(tmp_path, monkeypatch, capsys):
    """Its own fields changed and its checksum recomputed: a Monitor size naming a file outside the
    run (which resuming would have cut to 0 bytes), a step count of 10^12 or a string: refused in
    one line, exit 2, before any file is touched."""
    at_boundary = train.Checkpointer.at_boundary

    def ctrl_c_at_step_400(self, model):  # noqa: ANN001, ANN202
        if model.num_timesteps >= 400 and not self.signal:
            signal.raise_signal(signal.SIGINT)
        at_boundary(self, model)

    monkeypatch.setattr(train.Checkpointer, "at_boundary", ctrl_c_at_step_400)
    assert train.main(argv("ppo", "native", tmp_path)) == 128 + signal.SIGINT
    monkeypatch.setattr(train.Checkpointer, "at_boundary", at_boundary)
    path = tmp_path / "ppo" / "Zudecken-seed1" / "checkpoint.npz"
    meta, arrays = checkpoint.load(path)
    victim = tmp_path / "victim.txt"
    victim.write_text("a user's file\n")
    log = next(iter(meta["monitor_sizes"]))
    crafted = [{"monitor_sizes": {"../../../victim.txt": 0}}, {"monitor_sizes": {log: 10**9}},
               {"num_timesteps": 10**12}, {"model": {**meta["model"], "num_timesteps": 10**12}},
               {"num_timesteps": "400"}, {"seconds": "x"}, {"monitor_clocks": "x"}]  # fmt: skip
    logs = {p: p.read_bytes() for p in (path.parent / "monitor").glob("*")}
    for change in crafted:
        checkpoint.save(path, {**{k: v for k, v in meta.items() if k != "version"}, **change}, arrays)
        with pytest.raises(SystemExit) as exc:
            train.main([*argv("ppo", "native", tmp_path), "--resume"])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and "not this run's checkpoint" in err and "Traceback" not in err, change
        assert victim.read_text() == "a user's file\n"
        assert {p: p.read_bytes() for p in (path.parent / "monitor").glob("*")} == logs
