"""``results/`` holds what documented commands write, and the test suite never writes there."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
TEXTS = [ROOT / "README.md", ROOT / "Makefile", *sorted((ROOT / "docs").rglob("*.md")),
         *sorted((ROOT / "experiments").rglob("*.py")), *sorted((ROOT / "scripts").glob("*"))]  # fmt: skip


def test_every_result_is_named_where_its_command_is_documented():
    """Each file's name (without its extension: ``how_well.{json,md}``), or its folder's path for a
    run folder kept whole, appears in the README, the docs or the commands that write it."""
    text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in TEXTS if p.is_file())
    unnamed = []
    for path in sorted(p for p in RESULTS.rglob("*") if p.is_file()):
        rel = path.relative_to(RESULTS)
        folder = f"results/{rel.parts[0]}" if len(rel.parts) > 1 else None
        if path.stem not in text and (folder is None or folder not in text):
            unnamed.append(str(rel))
    assert unnamed == []
