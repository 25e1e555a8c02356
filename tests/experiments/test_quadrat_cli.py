"""``quadrat``, the one command-line tool: its help lists every command, each command and each
learner answers ``--help``, and a wrong command is one line and exit status 2."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
from quadrat_env.experiments import cli

ROOT = Path(__file__).resolve().parents[2]


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as stop:  # argparse's --help and errors
            code = stop.code
    return code, out.getvalue(), err.getvalue()


def test_the_console_script_is_installed_as_quadrat():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["quadrat"] == "quadrat_env.experiments.cli:main"
    assert {"quadrat-play", "quadrat-bench"} <= set(scripts)


def test_help_lists_every_command_in_one_screen():
    code, out, _ = run(["--help"])
    assert code == 0
    found = cli.commands()
    assert {"play", "train", "bench", "benchmark", "solve", "publish", "exact"} <= set(found)
    assert all(f"  {name} " in out for name in found)
    assert len(out.splitlines()) <= 24 and max(map(len, out.splitlines())) <= 100


def test_no_command_shows_the_usage_and_exits_2():
    code, out, err = run([])
    assert code == 2 and "usage: quadrat" in err and out == ""


@pytest.mark.parametrize("name", sorted(cli.commands()))
def test_each_command_answers_help(name, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["quadrat"])
    code, out, _ = run([name, "--help"])
    assert code == 0 and "usage" in out.lower(), out[-300:]


@pytest.mark.parametrize("name", sorted(set(cli.commands()) - {"train"}))
def test_each_commands_help_says_what_it_does_in_whole_sentences(name, monkeypatch):
    """The description under the usage line is the module docstring's first paragraph, whole (its
    first line alone ended mid-sentence where the docstring wrapped)."""
    monkeypatch.setattr(sys, "argv", ["quadrat"])
    _, out, _ = run([name, "--help"])
    paragraphs = out.split("\n\n")
    said = " ".join(paragraphs[1].split())
    assert not said.startswith("options:") and said.endswith((".", ")")), said


@pytest.mark.parametrize("algo", sorted(cli.TRAIN))
def test_each_learner_answers_help_through_train(algo, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["quadrat"])
    code, out, _ = run(["train", "--algo", algo, "--help"])
    assert code == 0 and "--env" in out, out[-300:]


@pytest.mark.parametrize("argv, says", [
    (["nope"], "unknown command 'nope'"),
    (["train", "--env", "Zudecken32"], "give --algo"),
    (["train", "--algo", "dqn"], "unknown --algo 'dqn'"),
    (["train", "--algo=dqn"], "unknown --algo 'dqn'"),
])  # fmt: skip
def test_a_wrong_command_is_one_line_and_exit_2(argv, says):
    code, out, err = run(argv)
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1 and out == ""


def test_train_passes_algo_to_sb3_and_drops_it_for_the_others():
    sb3 = ["--algo", "ppo", "--env", "Quadrat"]
    assert cli._train(sb3) == (f"{cli.PACKAGE}.train", sb3)
    assert cli._train(["--env", "Quadrat", "--algo=td"]) == (f"{cli.PACKAGE}.td", ["--env", "Quadrat"])


def test_the_installed_command_runs_a_subcommand():
    """The real entry point in a fresh interpreter: a bad option of a command is one line, exit 2."""
    argv = [sys.executable, "-m", "quadrat_env.experiments.cli", "solve", "Zudecken", "--seed", "x"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("quadrat solve: error:")


@pytest.mark.parametrize("argv", [["--help"], ["--version"]])
def test_its_own_output_to_a_reader_that_went_away_is_no_traceback(argv):
    """``quadrat --help | head -1``: the pipe is closed before the command prints."""
    p = subprocess.Popen([sys.executable, "-m", "quadrat_env.experiments.cli", *argv],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait() == 0
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


@pytest.mark.parametrize("entry", ["quadrat", "quadrat-play", "quadrat-bench"])
def test_ctrl_c_while_a_command_imports_is_one_line_and_exit_130(entry, monkeypatch, capsys):
    def interrupted(module: str):  # noqa: ANN202
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.importlib, "import_module", interrupted)
    if entry == "quadrat":  # while it finds the studies' commands, and while the command imports
        code = cli.main(["bench", "--help"])
        monkeypatch.setattr(cli, "commands", lambda: dict(cli.COMMANDS))
        assert cli.main(["bench", "--help"]) == 130
    else:
        code = (cli.play if entry == "quadrat-play" else cli.bench)(["--help"])
    err = capsys.readouterr().err.strip().splitlines()
    said = {"quadrat": ["quadrat", "quadrat bench"]}.get(entry, [entry])
    assert code == 130
    assert err == [f"{name}: stopped while starting (Ctrl-C); nothing was done" for name in said]


@pytest.mark.parametrize(("entry", "command"), [("quadrat-play", "play"), ("quadrat-bench", "bench")])
def test_the_two_short_commands_are_their_quadrat_commands(entry, command, capsys):
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts[entry] == f"quadrat_env.experiments.cli:{command}"
    with pytest.raises(SystemExit) as stop:
        getattr(cli, command)(["--help"])
    assert stop.value.code == 0 and capsys.readouterr().out.startswith("usage:")


STOPPED_IMPORT = """
import sys
sys.argv[0] = sys.argv[1]


class CtrlC:  # a Ctrl-C while the package imports its registry (its first ~0.6 s)
    def find_spec(self, name, path=None, target=None):
        if name == "quadrat_env.registry":
            raise KeyboardInterrupt


sys.meta_path.insert(0, CtrlC())
from quadrat_env.experiments.cli import main  # what the console script does first
"""


@pytest.mark.parametrize("program", ["/venv/bin/quadrat", "/venv/bin/quadrat-bench", "/home/me/mine.py"])
def test_ctrl_c_while_the_package_imports_is_one_line_for_its_commands(program):
    done = subprocess.run([sys.executable, "-c", STOPPED_IMPORT, program], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    name = program.rsplit("/", 1)[1]
    if name == "mine.py":  # anyone else's program gets its KeyboardInterrupt as usual
        assert "KeyboardInterrupt" in done.stderr and done.returncode != 0
        return
    assert done.returncode == 130 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == f"{name}: stopped while starting (Ctrl-C); nothing was done"
