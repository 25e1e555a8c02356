"""Every command-line entry point answers garbage with argparse's usage line and exit status 2."""

from __future__ import annotations

import importlib

import pytest

ZU = "quadrat_env/Zudecken-v0"
RL = "experiments/models/Zudecken-rl.zip"  # an afterstate network
# entry points, as quadrat_env.<module>:<function> (scripts.<module>: the repository's scripts)
GARBAGE = {
    "scripts.reference_search:main": [[], ["Quadrille"], ["Zudecken", "--deals", "0"]],
    "agents.solver:main": [[], ["Solitaire"], ["Zudecken", "--deals", "0"], ["Zudecken", "--deals", "x"],
                            ["Zudecken", ""], ["Zudecken", "--seed", "-1"], ["Zudecken", "AC AC"],
                            ["Zudecken", "--seed", "1", "--deals", "3"]],
    "experiments.play:main": [[], ["Nope"], ["Zudecken", "--seed", "-1"], ["Zudecken", "--seed", "1.5"]],
    "experiments.benchmark:main": [["--deals", "0"], ["--deals", "-3"], ["--env", "CartPole-v1"],
                                   ["--jobs", "0"], ["--planner-deals", "-1"], ["--models", "/nonexistent"],
                                   ["--deals", "nan"]],
    "experiments.train:main": [["--env", ZU], ["--env", ZU, "--algo", "a2c"],
                               ["--env", ZU, "--algo", "ppo", "--timesteps", "-5"],
                               ["--env", ZU, "--algo", "ppo", "--seed", "-1"],
                               ["--env", ZU, "--algo", "ppo", "--init", "/nonexistent.zip"]],
    "experiments.zudecken.imitate:main": [["--seed", "-1"], ["--epsilon", "2"], ["--jobs", "0"],
                                 ["--seed", "9"], ["--epsilon", "nan"], ["--deals-per-round", "x"],
                                 ["--net-arch", "0"], ["--net-arch"], ["--loss", "mse"],
                                 ["--lr-decay", "linear"], ["--features", "moves"], ["--augment", "yes"],
                                 ["--play-batch", "-1"], ["--channels", "0"], ["--layers", "17"],
                                 ["--hidden", "5000"],
                                 ["--behaviour", "/nonexistent.zip"],
                                 ["--behaviour", "/nonexistent.zip", "--labels", "/tmp/x.npz"]],
    "experiments.zudecken.regret:main": [[], ["--agent", "smart"], ["--model", "/nonexistent.zip"],
                                ["--deals", "0"], ["--agent", "greedy", "--samples", "1"]],
    "experiments.demo:main": [["--deals", "0"], ["--show", "-1"], ["--env", "nope"]],
    "experiments.zudecken.lookahead:main": [[], ["--model", "/nonexistent.zip"],
                                            ["--model", RL, "--samples", "1"], ["--model", RL, "--z", "nan"],
                                            ["--model", "experiments/models/Zudecken-ppo.zip"],
                                            ["--model", RL, "--env", "quadrat_env/Zudecken32-v0"],
                                            ["--merge", "/nonexistent.json"], ["--merge", "pyproject.toml"],
                                            ["--merge", "results/benchmark.json"]],
    "experiments.zudecken.ensemble:main": [[], ["--models", RL], ["--models", RL, RL],
                                           ["--models", RL, "/nonexistent.zip"],
                                           ["--models", RL, "experiments/models/Zudecken-ppo.zip"],
                                           ["--models", RL, "experiments/models/Zudecken32-rl.zip"],
                                           ["--models", RL, "experiments/models/seeds/Zudecken-rl-seed1.zip",
                                            "--deals", "0"],
                                           ["--models", RL, "experiments/models/seeds/Zudecken-rl-seed1.zip",
                                            "--average", "median"]],
    "experiments.zudecken.planner_curve:main": [["--deals", "0"], ["--samples", "0"],
                                       ["--env", "CartPole-v1"], ["--time-budget", "-1"],
                                       ["--time-budget", "inf"]],
    "experiments.checks.startup:main": [["--runs", "0"], ["--env", "nope"]],
    "experiments.td:main": [["--env", ZU, "--moves", "0"], ["--env", ZU, "--seed", "-1"], ["--env", "nope"],
                            ["--env", "quadrat_env/Quadrat-v0"]],
    "experiments.throughput:main": [["--seconds", "0"], ["--seconds", "nan"], ["--ppo-timesteps", "-1"],
                                    ["--jax", "maybe"], ["--jax-sizes", "0"], ["--jax-sizes", "a,b"]],
    "experiments.checks.jax_equal:main": [["--deals", "0"], ["--chunk", "x"], ["--seed", "-1"]],
    "experiments.common.slim:main": [[], ["/nonexistent"]],
    "experiments.record:main": [["Nope"], ["Zudecken", "--agent", "smart"], ["Zudecken", "--fps", "0"],
                                ["Zudecken", "--out", "x.mp4"], ["Zudecken", "--seed", "-2"],
                                ["Zudecken", "--agent", "/nonexistent.zip"]],
    "experiments.publish:main": [[], ["/nonexistent-run"]],
    "scripts.fuzz:main": [["--steps", "0"], ["--steps", "many"], ["--env", "CartPole-v1"]],
    "experiments.zudecken.exact_values:main": [["--ranks", "3", "13"], ["--ranks", "6", "5"],
                                               ["--ranks", "4"], ["--checkpoint-minutes", "0"],
                                               ["--threads", "0"]],
    "scripts.docs_check:main": [["--site", "/nonexistent"], ["--site", "docs", "--chromium", "/nonexistent"]],
    "experiments.zudecken.how_well:main": [["--deals", "0"], ["--budgets"], ["--budgets", "0"],
                                  ["--planner-deals", "x"]],
    "experiments.zudecken.exact_stops:main": [["--trials", "0"], ["--ranks", "3"], ["--trials", "x"]],
    "experiments.zudecken.models32:main": [["--deals", "0"], ["--models", "/nonexistent"],
                                           ["--benchmark", "/nonexistent"]],
    "scripts.solver_then_now:main": [["--deals", "0"], ["--rounds", "-1"], ["--deals", "x"],
                                         ["--commit", "no-such-commit"],  # below: the first commit, no solver
                                         ["--commit", "20af856", "--deals", "2", "--rounds", "1"]],
}  # fmt: skip
CASES = [(entry, argv) for entry, argvs in GARBAGE.items() for argv in argvs]


@pytest.mark.parametrize(("entry", "argv"), CASES, ids=[f"{e.split(':')[0]} {' '.join(a)}" for e, a in CASES])
def test_garbage_gets_one_clear_line_and_exit_2(entry, argv, capsys):
    module, name = entry.split(":")
    package = "" if module.startswith("scripts.") else "quadrat_env."  # scripts/: not installed
    main = getattr(importlib.import_module(package + module), name)
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines and "Traceback" not in err and lines[-1].split(": error: ", 1)[-1], err
    assert len([line for line in lines if ": error: " in line]) == 1, err
