"""Markdown lists render as lists: a list item needs a blank line before it (or another item, a
heading or an indented line), else Python-Markdown prints it as a run-on paragraph with a "- "."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ITEM, OTHER_ITEM = re.compile(r"^[-*] "), re.compile(r"^ *([-*]|[0-9]+\.) ")


def test_every_list_has_a_blank_line_before_it():
    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        fence, prev = False, ""
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            fence ^= line.startswith("```")
            follows = (
                prev.strip() and not OTHER_ITEM.match(prev) and not prev.startswith(("#", "  ", "|", "<!--"))
            )
            if not fence and ITEM.match(line) and follows:
                found.append(f"{page.relative_to(ROOT)}:{number}")
            prev = line
    assert found == []
