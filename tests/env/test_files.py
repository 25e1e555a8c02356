"""Every file is written whole or not at all: a writer that fails or is killed mid-write leaves
the old bytes as they were."""

from __future__ import annotations

import re
import resource
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from quadrat_env import files
from quadrat_env.files import atomic_open, atomic_path, atomic_write

ROOT = Path(__file__).resolve().parents[2]
OLD = b"old bytes that must survive\n" * 10


def write_under_size_limit(code: str, limit: int = 1 << 16) -> subprocess.CompletedProcess:
    """Run ``code`` with files limited to ``limit`` bytes (``ulimit -f``): a larger write is killed
    by SIGXFSZ, as a full disk or a kill would stop it."""

    def limit_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          preexec_fn=limit_size, timeout=300)  # fmt: skip


WRITERS = {
    "atomic_write": "atomic_write(PATH, b'x' * 100_000)",
    "atomic_open": "with atomic_open(PATH, 'w') as f:\n    f.write('y' * 100_000)",
    "atomic_path": "with atomic_path(PATH) as tmp:\n    tmp.write_bytes(b'z' * 100_000)",
    "write_deals": (
        "from quadrat_env.agents.evaluate import Episode, write_deals\n"
        "write_deals(PATH, [Episode(i, True, 0, 10, 0, 1.0) for i in range(20_000)])"
    ),
    "update_page": (
        "from quadrat_env.experiments.common.pages import update_page\n"
        "update_page(PATH, '| x |\\n' * 20_000, 'cmd', markers=('<!-- a -->', '<!-- b -->'))"
    ),
}


@pytest.mark.parametrize("how", ["fails", "killed"])
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_writer_that_fails_or_is_killed_mid_write_leaves_the_old_file_whole(tmp_path, writer, how):
    path = tmp_path / "target.csv"
    old = OLD + b"<!-- a -->\nold table\n<!-- b -->\n"
    path.write_bytes(old)
    code = f"from pathlib import Path\nfrom quadrat_env.files import *\nPATH = Path({str(path)!r})\n"
    # Python ignores SIGXFSZ, so the write fails with EFBIG; with the signal's default, it kills
    kill = "import signal; signal.signal(signal.SIGXFSZ, signal.SIG_DFL)\n" if how == "killed" else ""
    out = write_under_size_limit(kill + code + WRITERS[writer])
    if how == "killed":
        assert out.returncode == -signal.SIGXFSZ, out.stderr[-2000:]
    else:
        assert out.returncode == 1 and "File too large" in out.stderr, out.stderr[-2000:]
    assert path.read_bytes() == old
    # unlimited, the same writer replaces the file
    done = subprocess.run([sys.executable, "-c", code + WRITERS[writer]], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert path.read_bytes() != old


def test_a_failed_write_raises_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "model.zip"
    path.write_bytes(OLD)
    with pytest.raises(RuntimeError, match="writer failed"), atomic_path(path) as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("writer failed")
    assert path.read_bytes() == OLD
    assert [p.name for p in tmp_path.iterdir()] == ["model.zip"]


def test_atomic_files_keep_permissions_and_suffix(tmp_path):
    path = tmp_path / "table.md"
    path.write_text("old")
    path.chmod(0o640)
    with atomic_path(path) as tmp:
        assert tmp.suffix == ".md" and tmp.parent == tmp_path
        tmp.write_text("new")
    assert path.read_text() == "new" and path.stat().st_mode & 0o777 == 0o640
    atomic_write(tmp_path / "fresh.json", "{}")
    assert (tmp_path / "fresh.json").stat().st_mode & 0o777 == 0o644 & ~_umask()
    with pytest.raises(ValueError, match="mode"), atomic_open(path, "a"):
        pass


def _umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_no_module_writes_a_file_but_through_quadrat_env_files():
    """Plain writes (``write_text``, ``open(..., "w")``, ``model.save(path)``, ``savefig(path)``)
    would truncate the old file first; each must go through quadrat_env.files."""
    plain = re.compile(r"\.write_(text|bytes)\(|open\([^)]*[\"'][wa]b?[\"']|\bmodel\.save\((?!buffer\b)|"
                       r"savefig\(\s*path|shutil\.copy|np\.save\w*\((?!f\b)|imwrite\(\s*out")  # fmt: skip
    found = []
    for folder in ("quadrat_env", "agents", "experiments"):
        for py in (ROOT / folder).rglob("*.py"):
            if py.name == "files.py":
                continue
            for n, line in enumerate(py.read_text().splitlines(), 1):
                if plain.search(line) and "atomic_" not in line and not line.lstrip().startswith("#"):
                    found.append(f"{py.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, "\n".join(found)


def test_a_folder_is_copied_whole_or_not_at_all(tmp_path, monkeypatch):
    source = tmp_path / "run"
    (source / "sub").mkdir(parents=True)
    (source / "a.json").write_text("{}")
    (source / "sub" / "b.npz").write_bytes(b"\0" * 100)
    files.copy_folder(source, tmp_path / "kept" / "run")
    assert (tmp_path / "kept" / "run" / "sub" / "b.npz").read_bytes() == b"\0" * 100
    with pytest.raises(FileExistsError, match="exists already"):
        files.copy_folder(source, tmp_path / "kept" / "run")

    def full_disk(src, dst, **kw):  # noqa: ANN001, ANN003, ANN202
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.shutil, "copytree", full_disk)
    with pytest.raises(OSError, match="No space left"):
        files.copy_folder(source, tmp_path / "kept" / "other")
    assert sorted(p.name for p in (tmp_path / "kept").iterdir()) == ["run"]  # no half copy, no temp folder
