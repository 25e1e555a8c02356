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


def test_the_records_index_names_every_record_and_how_it_was_made():
    """``results/README.md`` lists each top-level record (a file by its stem, a folder by its name)
    in its tables, each row with the command or the README that made it."""
    index = (RESULTS / "README.md").read_text(encoding="utf-8")
    rows = [line for line in index.splitlines() if line.startswith("| `")]
    named = "\n".join(row.split(" | ")[0] for row in rows)
    records = [p for p in sorted(RESULTS.iterdir()) if p.name != "README.md" and not p.name.startswith(".")]
    missing = [p.name for p in records if f"`{p.name}" not in named and f"`{p.stem}." not in named]
    assert missing == []
    for row in rows:
        made_by = row.split(" | ")[2]
        assert "`" in made_by or "README" in made_by, row
