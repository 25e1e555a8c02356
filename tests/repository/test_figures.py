"""Every result figure of the README and the docs is in a committed record.

A figure here is a percentage written with decimals ("61.27%", "[60.14%, 62.05%]"): what the
project measured. Each must be found, to the decimals written, in a committed record (a text file
under ``results/`` or ``experiments/models/``, as a fraction or as a percentage), in what a tested
generator writes from those records (the README's headline), as a share of two such figures
(:data:`DERIVED`, the arithmetic checked), as the output of a command of a few seconds
(:data:`REPRODUCED`, run here), or in :data:`QUOTED` with its source. A figure that is none of
these was measured once and not kept: keep its record or drop it. What this cannot see: a figure
that some unrelated record happens to hold passes (it finds figures with no record at all, not a
figure credited to the wrong record), and counts, p-values and timings are not read.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]
RECORDS = (ROOT / "results", ROOT / "experiments" / "models")
TEXT = {".json", ".csv", ".md", ".yml", ".log", ".txt"}

#: Figures that are no measurement of ours, each with where it comes from.
QUOTED = {
    "97.5": "a confidence level (the one-sided end of a 95% interval), not a measurement",
    "27.6": "an extrapolation, not a measurement: the 12-rank exact optimum 32.57% "
    "(results/zudecken_exact.json) times 0.847",
}

#: Shares written in the pages: figure -> (part, whole), each a backed figure.
DERIVED = {
    "98.1": ("61.13", "62.29"),  # the planner on the 10,000 held-out 32-card deals, of the optimum
    "58.9": ("36.68", "62.29"),  # PPO from scratch in JAX, 40M moves on the CPU, of the optimum
}

#: Figures a command of a few seconds prints: figure -> the command's arguments after ``python -m``.
REPRODUCED = {
    "80.8": ["quadrat_env.agents.solver", "Zudecken", "--deals", "1000"],  # 808 of 1,000 deals winnable
}

FIGURE = re.compile(r"(?<![\w.,])(\d{1,3}\.\d+)%")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE]-?\d+)?")


@cache
def recorded() -> frozenset[float]:
    """Every number in the committed records and in the docs' sections made from them."""
    from quadrat_env.experiments.common import studies

    texts = [f.read_text(errors="ignore") for top in RECORDS for f in top.rglob("*") if f.suffix in TEXT]
    result = json.loads((ROOT / "results" / "benchmark.json").read_text())
    texts += [text for _, text in studies.readme_sections(result)]  # the README's generated sections
    texts += [text for _, text in studies.page_sections(result)]  # and the benchmark page's
    numbers = set()
    for text in texts:
        text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)  # 10,000 -> 10000; CSV commas stay
        numbers.update(float(m) for m in NUMBER.findall(text))
    return frozenset(numbers)


def backed(figure: str) -> bool:
    """Whether the records hold ``figure`` (a percentage) to its decimals, as a fraction or a percentage."""
    value, half = float(figure), 0.5 * 10 ** -len(figure.split(".")[1]) + 1e-9
    if figure in QUOTED or figure in DERIVED or figure in REPRODUCED:  # each checked below
        return True
    return any(abs(100 * x - value) <= half or abs(x - value) <= half for x in recorded())


def figures(page: Path) -> list[tuple[int, str]]:
    lines = page.read_text(encoding="utf-8").splitlines()
    return [(i, m) for i, line in enumerate(lines, 1) for m in FIGURE.findall(line)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_figure_of_a_page_is_in_a_committed_record(page):
    unbacked = [f"line {i}: {figure}%" for i, figure in figures(page) if not backed(figure)]
    assert unbacked == [], f"{page.name}: figures with no committed record: {unbacked}"


def test_the_check_finds_a_figure_that_no_record_holds():
    assert backed("62.29") and backed("61.27")  # the 32-card optimum; TD's 3-seed mean (the headline)
    assert not backed("62.2917") and not backed("0.000123")


@pytest.mark.parametrize("figure", DERIVED)
def test_a_derived_share_is_the_share_of_two_backed_figures(figure):
    part, whole = DERIVED[figure]
    assert backed(part) and backed(whole) and part not in DERIVED and whole not in DERIVED
    assert f"{100 * float(part) / float(whole):.{len(figure.split('.')[1])}f}" == figure


@pytest.mark.parametrize("figure", REPRODUCED)
def test_a_reproduced_figure_is_what_its_command_prints(figure):
    out = subprocess.run([sys.executable, "-m", *REPRODUCED[figure]], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    printed = [float(x) for x in FIGURE.findall(out.stdout)]
    places = len(figure.split(".")[1])
    assert any(f"{x:.{places}f}" == figure for x in printed), out.stdout[-2000:]
