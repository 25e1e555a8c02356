"""Seed ranges: declared once, disjoint, and every command refuses seeds that would overlap."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quadrat_env import seeds


def test_declared_ranges_are_disjoint():
    for a, b in itertools.combinations(seeds.RANGES, 2):
        assert a.stop <= b.start or b.stop <= a.start, (a, b)


@given(seed=st.integers(-5, 20), deals=st.integers(0, 200_000_000))
def test_imitation_seeds_stay_in_their_range(seed, deals):
    try:
        got = seeds.imitation(seed, deals)
    except ValueError:
        return
    assert seeds.IMITATION.start <= got.start and got.stop <= seeds.IMITATION.stop


@given(seed=st.integers(-5, 2_000_000), n_envs=st.integers(0, 5000))
def test_rl_training_seeds_stay_in_their_range(seed, n_envs):
    try:
        got = seeds.rl_training(seed, n_envs)
    except ValueError:
        return
    assert seeds.RL_TRAINING.start <= got.start and got.stop <= seeds.RL_TRAINING.stop


@given(deals=st.integers(0, 2_000_000_000))
def test_benchmark_deals_stay_held_out(deals):
    try:
        got = seeds.BENCHMARK.take(deals)
    except ValueError:
        return
    assert got.start == 10**9 and got.stop <= seeds.BENCHMARK.stop


@pytest.mark.parametrize(("module", "argv", "message"), [
    ("zudecken.imitate", ["--seed", "9"], "imitation training"),  # would train on the benchmark's deals
    ("zudecken.imitate", ["--seed", "8"], "imitation training"),  # would train on the validation deals
    ("zudecken.imitate", ["--seed", "0", "--rounds", "2", "--deals-per-round", "60000000"], "at most"),
    ("train", ["--env", "quadrat_env/Zudecken-v0", "--algo", "ppo", "--seed", "999999"], "RL training"),
    ("td", ["--env", "quadrat_env/Zudecken32-v0", "--seed", "3906"], "RL training"),  # 3,906 x 256 envs
])  # fmt: skip
def test_commands_refuse_overlapping_seeds(module, argv, message, capsys):
    import importlib

    main = importlib.import_module(f"experiments.{module}").main
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err
