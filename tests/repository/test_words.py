"""The repository speaks of the software: no word of how its work was organised (numbered issues,
stops or sessions) in any file it holds."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORDS = r"stops? \d+|sessions? \d+|issues? \d+|the issue[ ]asks|since[ ]stop|earlier sessions?"
PROCESS = re.compile(rf"\b({WORDS})\b", re.IGNORECASE)


def tracked() -> list[Path]:
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    return [ROOT / line for line in out.stdout.splitlines()]


def test_no_file_speaks_of_how_the_work_was_organised():
    found = []
    for path in tracked():
        if path.name == "test_words.py" or path.suffix in (".png", ".gif", ".zip", ".gz", ".npz", ".whl"):
            continue
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        found += [f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}"
                  for n, line in enumerate(text.splitlines(), 1) if PROCESS.search(line)]  # fmt: skip
    assert not found, "\n".join(found)
