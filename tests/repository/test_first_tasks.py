"""The usage page's first tasks run as written, on a small budget: train PPO and compare it with
greedy (with the plot), and score an outside policy from the page's own module. How strong the
full-budget recipe is, is measured by its command and recorded in ``results/first_task/``."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")
pytest.importorskip("sb3_contrib")
pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
#: The recipe's budget -> a test's (the same commands and flags otherwise).
SMALLER = {"--moves 16000000": "--moves 8192 --eval-every 8192 --eval-deals 20 --test-deals 0",
           "--deals 10000": "--deals 100 --no-optimum"}  # fmt: skip


def section(title: str) -> str:
    start = PAGE.index(f"## {title}")
    end = PAGE.find("\n## ", start + 1)
    return PAGE[start : end if end > 0 else None]


def commands(text: str) -> list[list[str]]:
    """The ``quadrat ...`` lines of a section's bash blocks, made small, as argv lists."""
    lines = [line for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S)
             for line in block.splitlines() if line.startswith("quadrat ")]  # fmt: skip
    for big, small in SMALLER.items():
        lines = [line.replace(big, small) for line in lines]
    return [shlex.split(line.split("#")[0]) for line in lines]


def run(argv: list[str], cwd: Path) -> None:
    assert argv[0] == "quadrat"
    command = [sys.executable, "-m", "quadrat_env.experiments.cli", *argv[1:], "--no-progress"]
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{' '.join(argv)}\n{done.stderr[-2000:]}"


def test_train_ppo_and_compare_with_greedy_runs_as_written(tmp_path):
    steps = commands(section("First task"))
    assert [s[:2] for s in steps] == [["quadrat", "train"], ["quadrat", "bench"]]
    for argv in steps:
        run(argv, tmp_path)
    bench = tmp_path / "runs" / "first" / "bench"
    assert (bench / "bench.png").stat().st_size > 1000
    table = (bench / "bench.md").read_text()
    assert "| greedy |" in table and "McNemar" in table


def test_an_outside_policy_from_the_page_is_scored(tmp_path):
    text = section("Score your own policy")
    (tmp_path / "mypolicy.py").write_text(re.search(r"```python\n(.*?)```", text, flags=re.S).group(1))
    [argv] = commands(text)
    run([*argv, "--out", "scored"], tmp_path)
    table = (tmp_path / "scored" / "bench.md").read_text()
    assert "| first-legal |" in table and "| greedy |" in table


@pytest.mark.parametrize("page", ["README.md", "docs/install.md"])
def test_the_install_line_brings_the_extras_of_the_first_task(page):
    """The first install command a page shows brings what the first task's commands import: SB3
    and torch (``train``), and JAX for the JAX learners (``jax``)."""
    text = (ROOT / page).read_text(encoding="utf-8")
    extras = set(re.search(r'pip install -c constraints\.txt "\.\[([a-z,]+)\]"', text).group(1).split(","))
    algos = {argv[argv.index("--algo") + 1] for argv in commands(section("First task")) if "--algo" in argv}
    needs = {"train"} | ({"jax"} if algos & {"ppo_jax", "td_jax"} else set())
    assert needs <= extras, f"{page} installs {sorted(extras)}; the first task needs {sorted(needs)}"
