"""The compiled-code cache can cost speed, never the import, a step or a result.

Each case runs in a fresh interpreter with a cache folder of its own, plays the same Zudecken
deals and must print the same digest as a run with a healthy cache.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PLAY = """
import hashlib, warnings
warnings.simplefilter("always")
import gymnasium as gym, numpy as np
import quadrat_env
env = gym.make("quadrat_env/Zudecken-v0")
h = hashlib.sha256()
for seed in range(5):
    obs, info = env.reset(seed=seed)
    done = False
    while not done:
        obs, r, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
        h.update(obs.tobytes())
        done = term or trunc
print("DIGEST", h.hexdigest())
"""


def run(code: str, cache: Path, prelude: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    script = textwrap.dedent(prelude) + PLAY
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out


def digest(out: subprocess.CompletedProcess) -> str:
    return next(line for line in out.stdout.splitlines() if line.startswith("DIGEST"))


def cache_warnings(out: subprocess.CompletedProcess) -> list[str]:
    return [line for line in out.stderr.splitlines() if "CacheWarning" in line]


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A warm cache folder and the digest the rules give."""
    cache = tmp_path_factory.mktemp("cache")
    first = run(PLAY, cache)
    assert not cache_warnings(first)
    assert any(cache.rglob("*.nbc")), "a healthy run writes the cache"
    return cache, digest(first)


def test_no_writable_cache_folder_compiles_in_memory_with_one_warning(tmp_path, healthy):
    # What every numba locator does to test a folder; it fails for all of them when neither
    # site-packages nor HOME nor NUMBA_CACHE_DIR is writable.
    prelude = """
    import errno, numba.core.caching as c
    def refuse(self):
        raise PermissionError(errno.EACCES, "read-only", self.get_cache_path())
    c._CacheLocator.ensure_cache_path = refuse
    """
    out = run(PLAY, tmp_path, prelude)
    assert digest(out) == healthy[1]
    warned = cache_warnings(out)
    assert len(warned) == 1 and "NUMBA_CACHE_DIR" in warned[0]


def test_full_disk_compiles_in_memory_with_one_warning(tmp_path, healthy):
    prelude = """
    import contextlib, errno, numba.core.caching as c
    @contextlib.contextmanager
    def full(self, path):
        raise OSError(errno.ENOSPC, "No space left on device", path)
        yield
    c.IndexDataCacheFile._open_for_write = full
    """
    for _ in range(2):  # and again on the next run
        out = run(PLAY, tmp_path, prelude)
        assert digest(out) == healthy[1]
        assert len(cache_warnings(out)) == 1
    assert not any(tmp_path.rglob("*.nbc"))


@pytest.mark.parametrize("damage", ["halve", "garble"])
def test_damaged_cache_files_are_recompiled_and_then_repaired(tmp_path, healthy, damage):
    cache = tmp_path / "cache"
    run(PLAY, cache)
    files = [f for f in cache.rglob("*") if f.suffix in (".nbi", ".nbc")]
    assert files
    for i, f in enumerate(files):
        data = f.read_bytes()
        f.write_bytes(data[: len(data) // 2] if damage == "halve" else os.urandom(len(data) + i))
    out = run(PLAY, cache)
    assert digest(out) == healthy[1]
    assert len(cache_warnings(out)) == 1
    again = run(PLAY, cache)
    assert digest(again) == healthy[1]
    assert not cache_warnings(again), "the damaged files were replaced by whole ones"


def test_a_table_from_another_module_is_part_of_the_cache_key(tmp_path):
    """Editing a table that a compiled function imports from elsewhere (not its own source file)
    must select a new cache entry, not the stale one."""
    pkg = tmp_path / "toy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "rules.py").write_text(
        "from quadrat_env.core.jit import jit\nfrom toy.tables import TABLE\n\n"
        "@jit\ndef first():\n    return TABLE[0]\n\n"
        "@jit\ndef outer():\n    return first() + 0\n"
    )
    script = f"import sys; sys.path.insert(0, {str(tmp_path)!r})\nfrom toy.rules import outer\nprint(outer())"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}

    def value() -> str:
        # -B: no bytecode written, as a rewrite of the same size in the same second would load stale
        # bytecode (Python checks a source's size and whole-second mtime), not the new table
        cmd = [sys.executable, "-B", "-c", script]
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout.strip()

    for n in (7, 8, 7):
        (pkg / "tables.py").write_text(f"import numpy as np\nTABLE = np.array([{n}, 1])\n")
        assert value() == str(n)


def test_code_moved_unchanged_to_another_module_gets_another_fingerprint():
    """Cached compiled code names the modules of what it calls: after the rules moved to another
    module (unchanged), the old entry fails to load (a warning on every run), so the key changes."""
    import types

    from quadrat_env.core.jit import fingerprint

    def rule():
        return 41

    moved = types.FunctionType(rule.__code__, {**rule.__globals__, "__name__": "elsewhere"}, "rule")
    moved.__qualname__ = rule.__qualname__
    assert moved.__module__ == "elsewhere" and moved.__code__ is rule.__code__
    assert fingerprint(moved) != fingerprint(rule)


def test_an_install_of_pyc_files_only_plays_the_same(tmp_path, healthy):
    """No source files (``compileall -b``, sources deleted): no cache can be keyed to them, so the
    rules compile in memory, with one warning, and play as before."""
    import shutil

    root = Path(__file__).resolve().parents[2]
    target = tmp_path / "site"
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(root / "quadrat_env", target / "quadrat_env", ignore=skip)
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-b", str(target)], check=True)
    for py in target.rglob("*.py"):
        py.unlink()
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(target)}
    script = "import quadrat_env; print('FROM', quadrat_env.__file__)\n" + PLAY
    cmd = [sys.executable, "-c", script]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert f"FROM {target}" in out.stdout and ".pyc" in out.stdout
    assert digest(out) == healthy[1] and len(cache_warnings(out)) == 1
