"""The documentation site builds in strict mode (a broken link or reference fails), and the Python
examples of its pages and of the README run as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The framework pages' scripts run in tests/env/test_frameworks.py; adding-a-game.md shows fragments of
# tests/env/test_new_game.py, which runs them whole.
PAGES = sorted(
    p for p in (ROOT / "docs").rglob("*.md") if "frameworks" not in p.parts and p.name != "adding-a-game.md"
) + [ROOT / "README.md"]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """The site, built once in strict mode for this file's tests (each build takes seconds)."""
    tmp_path = tmp_path_factory.mktemp("docs")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")]
    return tmp_path, subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)


def test_the_site_builds_in_strict_mode(built):
    tmp_path, out = built
    assert out.returncode == 0, out.stderr[-4000:]
    for env_page in ("Quadrat", "Quadrat52", "Zudecken", "Zudecken32", "Quadrille"):
        html = (tmp_path / "site" / "environments" / env_page / "index.html").read_text()
        assert "Version History" in html and "Action Space" in html
    # every data cell is labelled with its column's heading: on a phone a row is shown as labelled cells
    bench = (tmp_path / "site" / "benchmark" / "index.html").read_text()
    cells = re.findall(r"<td[^>]*>", bench)
    assert cells and all("data-label=" in c for c in cells)
    # and its content is one element, so that a phone's grid of label and content keeps a cell that
    # mixes text and code whole
    assert len(re.findall(r"<td[^>]*><span>", bench)) == len(cells)
    labels = re.findall(r'data-label="([^"]*)"', bench)
    assert labels[:2] == ["player", "Zudecken win rate"]  # the Zudecken table, then every agent's
    assert labels[labels.index("env") : labels.index("env") + 3] == ["env", "agent", "deals"]
    # what the pages print as written: no Sphinx role, RST literal marker or run-on list item
    leftovers = {}
    for page in (tmp_path / "site").rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        found = [
            m for m in (":class:", ":func:", ":meth:", ":mod:", ":data:", "::</p>", "<p>- ") if m in text
        ]
        if found:
            leftovers[str(page.relative_to(tmp_path / "site"))] = found
    assert leftovers == {}


def test_every_ids_env_page_prints_its_own_observation_table():
    """A rung of the ladder shares its class docstring with the others; its page adds its table."""
    import importlib.util

    import quadrat_env
    from quadrat_env.registry import rules_for

    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    for env_id in quadrat_env.ENV_IDS:
        page = hooks.env_page(env_id)
        missing = [line for line in rules_for(env_id).layout.table().splitlines() if line not in page]
        assert missing == [], env_id
        assert ("This ID's observation" in page) == (env_id not in quadrat_env.env_ids(rungs=False)), env_id


@pytest.mark.parametrize("page", [p for p in PAGES if "```python" in p.read_text()], ids=lambda p: p.name)
def test_the_python_examples_of_a_page_run(page, tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)
    script = tmp_path / "example.py"
    script.write_text("\n".join(blocks))  # the page's blocks in order, as a reader runs them
    out = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr[-3000:]


def test_the_api_contents_name_each_entry_once(built):
    tmp_path, out = built
    assert out.returncode == 0, out.stderr[-4000:]
    html = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
    html = html[html.rindex("md-nav--secondary") :]  # the side bar's contents (the menu repeats them)
    entries = re.findall(
        r'<a href="#[^"]*" class="md-nav__link">\s*<span class="md-ellipsis">\s*([^<]+?)\s*</span>', html
    )
    pairs = list(zip(entries, entries[1:], strict=False))
    assert entries and not [a for a, b in pairs if a.lower() == b.lower()], entries  # "Rules", "Rules"
    assert entries.count("registry") <= 1, entries  # two modules of one name, told apart
