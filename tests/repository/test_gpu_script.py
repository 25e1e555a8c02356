"""The prepared GPU script refuses settings that cannot run before any work (one line, exit 2)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize(("setting", "message"), [
    ({"ROWS": "nonsense"}, "ROWS: 'nonsense' is not td_jax:<Env>, ppo_jax:<Env> or ppo_mlp:<Env>"),
    ({"ROWS": "td_jax:Zudecken32 bogus:Zudecken"}, "ROWS: 'bogus:Zudecken'"),
    ({"SEEDS": "a b"}, "SEEDS: 'a' is not a whole number"),
    ({"TAG": ".."}, "TAG: '..' must be a plain name"),
    ({"TAG": "../elsewhere"}, "TAG: '../elsewhere' must be a plain name"),
])  # fmt: skip
def test_gpu_rows_refuses_bad_settings_before_any_work(setting, message, tmp_path):
    env = {**os.environ, **setting, "OUT": str(tmp_path / "out"), "WORK": str(tmp_path / "work")}
    out = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_rows.sh")], env=env, capture_output=True,
                         text=True, timeout=60)  # fmt: skip
    assert out.returncode == 2 and message in out.stderr, out.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "work").exists()  # nothing was made
