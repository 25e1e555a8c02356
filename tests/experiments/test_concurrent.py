"""Two runs into one output folder never mix: the second is refused in one line while the first
holds the folder, and --overwrite clears the earlier run's files before writing."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from quadrat_env.files import FolderBusy, exclusive_folder


def bench(out, *extra: str) -> list[str]:  # noqa: ANN001
    return [sys.executable, "-m", "quadrat_env.experiments.compare", "--env", "Zudecken", "--deals", "300",
            "--baselines", "--no-optimum", "--no-progress", "--out", str(out), *extra]  # fmt: skip


def test_two_benchmarks_started_at_once_into_one_folder(tmp_path):
    out = tmp_path / "bench"
    a = subprocess.Popen(
        bench(out, "--agent", "hand"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    b = subprocess.Popen(
        bench(out, "--agent", "greedy"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    (_, err_a), (_, err_b) = a.communicate(timeout=300), b.communicate(timeout=300)
    codes = sorted([a.returncode, b.returncode])
    assert codes == [0, 2], (err_a, err_b)
    refused = err_a if a.returncode else err_b
    assert len(refused.strip().splitlines()) == 1 and "quadrat-bench: error:" in refused
    saved = json.loads((out / "bench.json").read_text())
    winner = saved["rows"][0]["agent"]
    assert sorted(p.name for p in out.glob("*.csv")) == [f"{winner.replace(' ', '-')}.csv"]


def test_overwrite_leaves_no_earlier_file(tmp_path):
    out = tmp_path / "bench"
    assert subprocess.run(bench(out, "--agent", "hand"), capture_output=True).returncode == 0
    assert (out / "hand-rule.csv").is_file()
    assert subprocess.run(bench(out, "--agent", "greedy", "--overwrite"), capture_output=True).returncode == 0
    assert sorted(p.name for p in out.glob("*.csv")) == ["greedy.csv"]


def test_the_lock_refuses_a_second_holder_and_goes_with_the_first(tmp_path):
    with exclusive_folder(tmp_path):
        holder = [sys.executable, "-c", f"from quadrat_env.files import exclusive_folder as e\n"
                  f"with e({str(tmp_path)!r}): pass"]  # fmt: skip
        other = subprocess.run(holder, capture_output=True, text=True)
        assert other.returncode == 1 and "FolderBusy" in other.stderr
        with pytest.raises(FolderBusy), exclusive_folder(tmp_path):  # a second open file, this process
            pass
    start = time.perf_counter()
    assert subprocess.run(holder, capture_output=True).returncode == 0
    assert time.perf_counter() - start < 60
