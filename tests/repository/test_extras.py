"""A missing extra is one clear line naming the extra to install: for every command and every picture
mode, each run in a fresh interpreter with the extras' packages blocked."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from quadrat_env.extras import EXTRA_OF, MissingExtra, missing_extra

BLOCKED = sorted(EXTRA_OF)  # every optional package at once: a plain install
RUN = """
import runpy, sys
for name in {blocked!r}:
    sys.modules[name] = None
sys.argv = ["{module}", *{argv!r}]
runpy.run_module("{module}", run_name="__main__", alter_sys=True)
"""
E = "quadrat_env.experiments."
# a command and arguments that reach a missing extra
NEEDS_AN_EXTRA = {
    E + "compare": ["--env", "Zudecken", "--model", "Zudecken-maskable_ppo", "--algo", "maskable_ppo",
                    "--deals", "3", "--baselines"],
    E + "benchmark": ["--deals", "3", "--planner-deals", "0"],
    E + "train": ["--env", "quadrat_env/Zudecken-v0", "--algo", "ppo"],
    E + "zudecken.imitate": ["--deals-per-round", "5"],
    E + "record": ["Zudecken", "--out", "x.gif"],
    E + "zudecken.regret": ["--agent", "greedy", "--deals", "3"],
    E + "zudecken.how_well": ["--deals", "3"],
    E + "publish": ["nowhere"],
    E + "throughput": ["--seconds", "0.1"],
    E + "grid": ["--help"],
}  # fmt: skip
# commands that need no extra
PLAIN = {
    E + "compare": ["--env", "Zudecken", "--agent", "greedy", "--deals", "3", "--baselines"],
    E + "demo": ["--deals", "3"],
    E + "zudecken.planner_curve": ["--deals", "2"],
    "quadrat_env.agents.solver": ["Zudecken", "--seed", "1"],
    "quadrat_env.agents.zudecken.exact": ["--ranks", "4"],
    E + "zudecken.optimum": ["--deals", "2", "--bound-deals", "2", "--bound-samples", "4", "--no-progress"],
}  # fmt: skip


def run(module: str, argv: list[str], tmp_path) -> subprocess.CompletedProcess:
    code = RUN.format(blocked=BLOCKED, module=module, argv=argv)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          stdin=subprocess.DEVNULL, timeout=600)  # fmt: skip


@pytest.mark.parametrize(("module", "argv"), NEEDS_AN_EXTRA.items(), ids=lambda x: str(x).split(".")[-1])
def test_a_command_that_needs_a_missing_extra_says_so_in_one_line(module, argv, tmp_path):
    out = run(module, argv, tmp_path)
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode == 1 and len(lines) == 1, out.stderr[-2000:]
    name = module.rsplit(".", 1)[-1]
    assert lines[0].startswith(f"{name}: ") and 'pip install "quadrat-env[train]"' in lines[0], lines[0]
    assert not list(tmp_path.iterdir()), "nothing is written before the check"


@pytest.mark.parametrize(("module", "argv"), PLAIN.items(), ids=lambda x: str(x).split(".")[-1])
def test_commands_without_extras_run_on_a_plain_install(module, argv, tmp_path):
    out = run(module, argv, tmp_path)
    assert out.returncode in (0, 1) and "Traceback" not in out.stderr, out.stderr[-2000:]


RENDER = """
import sys
sys.modules[{blocked!r}] = None
import gymnasium as gym, quadrat_env
try:
    {make}
except ImportError as err:
    print(type(err).__name__, err)
"""


@pytest.mark.parametrize(("blocked", "mode", "extra", "batched"), [
    ("PIL", "rgb_array", "render", False), ("PIL", "human", "human", False),
    ("pygame", "human", "human", False), ("PIL", "rgb_array", "render", True)])  # fmt: skip
def test_a_picture_mode_without_its_package_names_the_extra(blocked, mode, extra, batched):
    zu = "quadrat_env/Zudecken-v0"
    make = (
        f"gym.make_vec({zu!r}, 2, render_mode={mode!r})"
        if batched
        else f"gym.make({zu!r}, render_mode={mode!r})"
    )
    code = RENDER.format(blocked=blocked, make=make)
    out = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, timeout=300
    )
    assert out.stdout.startswith("MissingExtra ") and f'pip install "quadrat-env[{extra}]"' in out.stdout, (
        out.stdout + out.stderr[-2000:]
    )


def test_only_missing_optional_packages_count_as_missing_extras():
    assert missing_extra(ModuleNotFoundError("x", name="tqdm.auto")) is not None
    assert missing_extra(ModuleNotFoundError("x", name="numpy")) is None  # a real dependency: a real error
    assert missing_extra(ValueError("x")) is None
    assert isinstance(missing_extra(ModuleNotFoundError("x", name="yaml")), MissingExtra)


def test_a_command_whose_reader_goes_away_stops_without_a_traceback():
    # `command | head`: the pipe is closed before the command prints (it is still importing)
    p = subprocess.Popen([sys.executable, "-m", "quadrat_env.agents.zudecken.exact", "--ranks", "4"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait() == 1
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


def test_the_jax_check_without_jax_names_the_jax_extra(tmp_path):
    out = run(E + "checks.jax_equal", ["--deals", "2"], tmp_path)
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode == 1 and len(lines) == 1, out.stderr[-2000:]
    assert lines[0].startswith("jax_equal: ") and 'pip install "quadrat-env[jax]"' in lines[0], lines[0]


EVERY_COMMAND = """
import contextlib, io, json, sys
for name in {blocked!r}:
    sys.modules[name] = None
from quadrat_env.experiments import cli

answers = []
argvs = [[name, "--help"] for name in cli.commands() if name != "train"]
for argv in [*argvs, *(["train", "--algo", algo, "--help"] for algo in cli.TRAIN)]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as stop:  # argparse's --help
            code = stop.code
    answers.append([argv, code, err.getvalue()])
print(json.dumps(answers))
"""


def test_every_quadrat_command_on_a_plain_install_is_its_help_or_one_line():
    """``quadrat <command> --help`` and ``quadrat train --algo A --help`` with no extra installed:
    the help, or one line naming the extra and exit 1 (the JAX learners import JAX as they load)."""
    code = EVERY_COMMAND.format(blocked=BLOCKED)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    answers = json.loads(out.stdout.splitlines()[-1])
    assert len(answers) >= 15
    for argv, code, err in answers:
        lines = err.strip().splitlines()
        assert code == 0 or (code == 1 and len(lines) == 1 and "pip install" in lines[0]), (argv, code, err)
    jax_learners = [(code, err) for argv, code, err in answers if argv[2:3] in (["ppo_jax"], ["td_jax"])]
    assert len(jax_learners) == 2, answers
    assert all(
        code == 1 and err.startswith("quadrat train: ") and "[jax]" in err for code, err in jax_learners
    ), jax_learners


DROPPED_STOP = """
import gc, signal, sys, time
from quadrat_env.extras import command

# Ctrl-C as at a terminal: a test run started in the background (``make test &``) hands its
# processes SIGINT ignored, and then nothing is raised to drop
signal.signal(signal.SIGINT, signal.default_int_handler)

fired = []


def callback(phase, info):  # the handler's exception is raised in here, where Python drops it
    if phase == "start" and not fired:
        fired.append(1)
        signal.raise_signal(signal.{sig})
        fired.append(2)


@command
def main():
    gc.callbacks.append(callback)
    gc.collect()
    gc.callbacks.remove(callback)
    for _ in range(300):
        time.sleep(0.01)
    print("went on to the end")
    return 0


sys.exit(main())
"""


@pytest.mark.parametrize(("sig", "code", "said"), [("SIGINT", 130, "Ctrl-C"), ("SIGTERM", 143, "SIGTERM")])
def test_a_stop_dropped_in_a_garbage_collection_callback_still_stops_the_command(sig, code, said):
    # JAX registers such a callback: a Ctrl-C landing in it was printed as "Exception ignored" and the
    # command went on to exit 0
    done = subprocess.run([sys.executable, "-c", DROPPED_STOP.format(sig=sig)], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == code and "went on" not in done.stdout, (done.stdout, done.stderr)
    assert done.stderr.strip().splitlines() == [f"__main__: stopped by {said}"], done.stderr


TORCH_OOM = ("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: "
             "you tried to allocate 375410688 bytes. Error code 12 (Cannot allocate memory)")  # fmt: skip


@pytest.mark.parametrize(("error", "says"), [
    (RuntimeError(TORCH_OOM), "out of memory (it asked for 358 MiB more): lower the run's sizes"),
    (MemoryError(), "out of memory: lower the run's sizes"),
])  # fmt: skip
def test_running_out_of_memory_is_one_line_and_exit_1(error, says, capsys):
    from quadrat_env.extras import command

    @command
    def main() -> int:
        raise error

    assert main() == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0], err

    @command
    def other() -> int:
        raise RuntimeError("a bug, not the memory")

    with pytest.raises(RuntimeError, match="a bug"):  # any other error is not hidden
        other()
