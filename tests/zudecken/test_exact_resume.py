"""A lean exact solve stopped at any moment (Ctrl-C, SIGTERM, kill -9) resumes from its checkpoint to the same
value to the bit; a checkpoint of another solve is not used, a damaged one is an error."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from quadrat_env.agents.zudecken import exact_checkpoint
from quadrat_env.agents.zudecken.exact import ExactSolver, code_fingerprint
from quadrat_env.experiments.zudecken import exact_stops, exact_values

ROOT = Path(__file__).resolve().parents[2]
RANKS = 6  # seconds: long enough to be stopped mid-solve, after a checkpoint every 0.12 s


def args(out: Path, cache: Path) -> list[str]:
    return ["--ranks", str(RANKS), str(RANKS), "--threads", "1", "--out", str(out), "--cache", str(cache)]


def start(out: Path, cache: Path) -> subprocess.Popen:
    command = [sys.executable, "-c", exact_stops.CTRL_C, *args(out, cache),
               "--checkpoint-minutes", "0.002"]  # fmt: skip
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def after_a_checkpoint(cache: Path, generation: int = 1) -> None:
    meta = cache / "exact" / f"{RANKS}-cleared-groups" / "meta.json"
    deadline = time.monotonic() + 120
    while not (meta.is_file() and json.loads(meta.read_text())["generation"] >= generation):
        assert time.monotonic() < deadline, "no checkpoint written"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def uninterrupted() -> str:
    return ExactSolver(RANKS, lean=True, threads=1).win_rate().hex()


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT], ids=["kill -9", "Ctrl-C"])
def test_a_stopped_solve_resumes_to_the_same_value_to_the_bit(how, uninterrupted, tmp_path):
    run = start(tmp_path / "results", tmp_path / "cache")
    after_a_checkpoint(tmp_path / "cache")
    os.kill(run.pid, how)
    _, err = run.communicate(timeout=60)
    assert run.returncode == (-9 if how == signal.SIGKILL else 128 + how), err
    assert not (tmp_path / "results" / "zudecken_exact.json").exists()
    if how != signal.SIGKILL:  # Ctrl-C, SIGTERM: one line, after a checkpoint of the moment
        *_, saved, last = err.strip().splitlines()
        assert "Traceback" not in err and saved.endswith("checkpoint saved"), err
        name = "Ctrl-C" if how == signal.SIGINT else "SIGTERM"
        assert last.startswith(f"exact_values: stopped by {name}; checkpoint in")
    assert exact_values.main(args(tmp_path / "results", tmp_path / "cache")) == 0
    result = json.loads((tmp_path / "results" / "zudecken_exact.json").read_text())["ranks"][str(RANKS)]
    assert result["resumed"] and result["hex"] == uninterrupted
    assert not (tmp_path / "cache" / "exact" / f"{RANKS}-cleared-groups").exists()  # done with


def test_ctrl_c_as_a_search_thread_starts_leaves_no_search_writing_the_memo(monkeypatch):
    """Ctrl-C can land in a worker thread's start, after the thread began: a thread pool then loses
    track of it, and its search went on writing the memo while the checkpoint read it (a resumed
    solve once ended on another value). The memo must be still from the checkpoint on."""
    ExactSolver(4, lean=True, threads=1).win_rate()  # compiled first: a search then writes at once
    solver = ExactSolver(RANKS, lean=True, threads=1)
    solver.reserve(1 << 21)
    original = threading.Thread.start

    def start_then_ctrl_c(thread: threading.Thread) -> None:
        original(thread)
        monkeypatch.setattr(threading.Thread, "start", original)
        raise KeyboardInterrupt  # as if Ctrl-C came while start() waited for the thread

    monkeypatch.setattr(threading.Thread, "start", start_then_ctrl_c)
    seen = []

    def checkpoint() -> None:
        seen.append(solver.positions)
        time.sleep(0.3)  # a search left running would write positions meanwhile
        seen.append(solver.positions)

    with pytest.raises(KeyboardInterrupt):
        solver.value(0, solver.all_cards, 1, pause_every=60.0, on_pause=checkpoint)
    time.sleep(0.3)
    assert seen == [solver.positions] * 2


def test_a_checkpoint_of_another_solve_is_not_used_and_a_damaged_one_is_an_error(tmp_path):
    solver = ExactSolver(5, lean=True)
    solver.win_rate()
    exact_checkpoint.save(solver, tmp_path, {"seconds": 1.0})
    assert exact_checkpoint.restore(ExactSolver(5, lean=True), tmp_path)["positions"] == solver.positions
    assert exact_checkpoint.restore(ExactSolver(6, lean=True), tmp_path) is None  # another pack
    assert exact_checkpoint.restore(ExactSolver(5, "dealt", lean=True), tmp_path) is None  # other rules
    whole = (tmp_path / "keys-0.npy").read_bytes()
    (tmp_path / "keys-0.npy").write_bytes(whole[: len(whole) - 8])  # the last entry's key cut off
    with pytest.raises(ValueError, match=r"keys-0.npy does not match its checksum in meta.json \(damaged\)"):
        exact_checkpoint.restore(ExactSolver(5, lean=True), tmp_path)
    (tmp_path / "keys-0.npy").write_bytes(whole)
    values = bytearray((tmp_path / "vals-0.npy").read_bytes())
    values[-3] ^= 1  # one flipped bit in a value: it would resume to another "exact" value
    (tmp_path / "vals-0.npy").write_bytes(bytes(values))
    with pytest.raises(ValueError, match=r"vals-0.npy does not match its checksum"):
        exact_checkpoint.restore(ExactSolver(5, lean=True), tmp_path)
    meta = json.loads((tmp_path / "meta.json").read_text())
    np.save(tmp_path / "vals-0.npy", np.zeros(3))  # checksums that match, of a wrong-shaped array
    meta["sha256"]["vals"] = exact_checkpoint._sha256(tmp_path / "vals-0.npy")
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match=r"vals-0.npy holds float64 \(3,\)"):
        exact_checkpoint.restore(ExactSolver(5, lean=True), tmp_path)
    del meta["sha256"]  # a checkpoint that carries no checksum is not resumed
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(
        ValueError, match=r"gives no checksum of keys-0.npy: delete .* to start this pack over"
    ):
        exact_checkpoint.restore(ExactSolver(5, lean=True), tmp_path)
    (tmp_path / "meta.json").write_text("{")
    with pytest.raises(ValueError, match="meta.json is not a readable checkpoint"):
        exact_checkpoint.restore(ExactSolver(5, lean=True), tmp_path)


def test_a_checkpoint_is_read_and_written_a_chunk_at_a_time(tmp_path, monkeypatch):
    """Many chunks: the same memo back, as .npy files numpy reads whole too."""
    monkeypatch.setattr(exact_checkpoint, "CHUNK", 1000)
    solver = ExactSolver(6, lean=True, threads=1)
    value = solver.win_rate()
    exact_checkpoint.save(solver, tmp_path, {"seconds": 1.0})
    again = ExactSolver(6, lean=True, threads=1)
    assert exact_checkpoint.restore(again, tmp_path)["positions"] == solver.positions == again.positions
    assert again.value(0, again.all_cards) == value and again.positions == solver.positions  # all found
    keys, _ = solver.afterstates()
    assert np.array_equal(np.sort(np.load(tmp_path / "keys-0.npy")[:, 0]), np.sort(keys[:, 0]))


def test_packs_solved_by_separate_runs_keep_their_commands_and_log_lines(tmp_path, capsys):
    out, cache = tmp_path / "results", tmp_path / "cache"
    for n in (5, 4):
        assert exact_values.main(["--ranks", str(n), str(n), "--threads", "1", "--out", str(out),
                                  "--cache", str(cache)]) == 0  # fmt: skip
    ranks = json.loads((out / "zudecken_exact.json").read_text())["ranks"]
    assert list(ranks) == ["4", "5"]
    assert [ranks[n]["command"].split("--ranks ")[1][:3] for n in ranks] == ["4 4", "5 5"]
    log = (out / "zudecken_exact.log").read_text().splitlines()
    commands = [line for line in log if line.startswith("python -m")]
    assert commands == [ranks["5"]["command"], ranks["4"]["command"]]  # in the order they ran
    assert sum("optimal win rate" in line for line in log) == 2
    assert {ranks[n]["code"] for n in ranks} == {code_fingerprint()}
    # a pack solved by other code (a faster search) is kept, and said to be
    results = json.loads((out / "zudecken_exact.json").read_text())
    results["ranks"]["4"]["code"] = "other"
    (out / "zudecken_exact.json").write_text(json.dumps(results))
    assert exact_values.main(["--ranks", "4", "5", "--out", str(out), "--cache", str(cache)]) == 0
    assert json.loads((out / "zudecken_exact.json").read_text())["ranks"] == results["ranks"]
    assert "4 ranks: kept as solved by other code (other)\n" in capsys.readouterr().err


def test_the_52_card_record_names_its_log_from_the_working_folder(tmp_path, tmp_path_factory, monkeypatch):
    """The committed optimum file must not carry the solving machine's folders."""
    out = tmp_path / "results"
    out.mkdir()
    monkeypatch.chdir(tmp_path)
    solved = {"value": 0.25, "digits": "0.250000000000", "positions": 1}
    exact_values.record(out, {"ranks": {"13": solved}}, ["line"])
    optimum = json.loads((out / "zudecken_optimum.json").read_text())
    assert optimum["exact"] == 0.25 and optimum["exact_solve"]["log"] == "results/zudecken_exact.log"
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))  # outside: the path as given
    exact_values.record(out, {"ranks": {"13": solved}}, ["line"])
    assert json.loads((out / "zudecken_optimum.json").read_text())["exact_solve"]["log"] == str(
        out / "zudecken_exact.log"
    )


def test_a_damaged_checkpoint_a_busy_folder_or_too_little_memory_is_one_line(tmp_path, monkeypatch, capsys):
    from quadrat_env.files import exclusive_folder

    folder = tmp_path / "cache" / "exact" / f"{RANKS}-cleared-groups"
    solver = ExactSolver(RANKS, lean=True, threads=1)
    solver.value(0, solver.all_cards, 1, pause_every=0.05, on_pause=lambda: None)
    exact_checkpoint.save(solver, folder, {"seconds": 1.0})
    (folder / "vals-0.npy").write_bytes((folder / "vals-0.npy").read_bytes()[:-1] + b"\x01")
    with pytest.raises(SystemExit) as stop:
        exact_values.main(args(tmp_path / "results", tmp_path / "cache"))
    assert stop.value.code == 2 and "vals-0.npy does not match its checksum" in capsys.readouterr().err
    with (
        exclusive_folder(tmp_path / "results"),
        pytest.raises(SystemExit) as stop,
    ):  # another run writes there
        exact_values.main(args(tmp_path / "results", tmp_path / "cache"))
    assert stop.value.code == 2 and "another run is writing to" in capsys.readouterr().err
    from quadrat_env.core import checks

    monkeypatch.setattr(checks, "available_memory", lambda: 2**30)  # 1 GiB: 13 ranks need about 11
    with pytest.raises(SystemExit) as stop:
        exact_values.main(["--ranks", "13", "13", "--threads", "2", "--out", str(tmp_path / "r2")])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "13 ranks on 2 threads needs about 11.0 GiB" in err and "--ranks" in err
    assert not (tmp_path / "r2").exists()
