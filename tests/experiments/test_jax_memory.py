"""The JAX learners' memory: a run that does not fit is refused in one line before it allocates, a
large one says what it takes, and XLA's out-of-memory error is one line too."""

from __future__ import annotations

import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("optax")
pytest.importorskip("sb3_contrib")

import jax.numpy as jnp  # noqa: E402
from quadrat_env.experiments import ppo_jax, td_jax  # noqa: E402
from quadrat_env.experiments.common.jax_learners import memory  # noqa: E402

SMALL = ["--env", "Zudecken32", "--n-envs", "64", "--moves", "8192", "--no-progress"]


def _train(carry, n):  # noqa: ANN001, ANN202
    return carry * n + 1.0, carry.sum()


def test_a_training_call_that_does_not_fit_is_refused_and_a_large_one_says_so(monkeypatch, capsys):
    train, carry = jax.jit(_train), jax.ShapeDtypeStruct((1000, 1000), jnp.float32)
    took = memory.need(train, carry)
    assert took >= 8_000_000  # the 4 MB argument and the 4 MB result at least
    monkeypatch.setattr(memory, "free_memory", lambda: (took, "memory"))
    with pytest.raises(memory.OutOfMemory, match=r"n_envs 7 takes about 0\.0 GiB .* free: lower --n-envs"):
        memory.check(train, carry, 7)
    monkeypatch.setattr(memory, "free_memory", lambda: (100 * took, "memory"))
    memory.check(train, carry, 7)
    assert capsys.readouterr().err == ""  # small: nothing said
    monkeypatch.setattr(memory, "SAY_FROM", took)
    memory.check(train, carry, 7)
    assert "training takes about 0.0 GiB of memory (n_envs 7)" in capsys.readouterr().err


@pytest.mark.parametrize("command", [td_jax, ppo_jax])
def test_a_run_refused_for_memory_is_one_line_and_leaves_no_run_folder(
    command, tmp_path, monkeypatch, capsys
):
    def short(*_):  # noqa: ANN002, ANN202
        raise memory.OutOfMemory("n_envs 64 takes about 9.0 GiB of memory, more than 80% of the 1.0 GiB free")

    monkeypatch.setattr(memory, "check", short)
    assert command.main([*SMALL, "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "9.0 GiB" in err[0] and "Traceback" not in err[0], err
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and not p.name.endswith(".lock")]


def test_xla_out_of_memory_during_a_run_is_one_line_other_errors_are_not_hidden(
    tmp_path, monkeypatch, capsys
):
    def exhausted(*_):  # noqa: ANN002, ANN202
        raise jax.errors.JaxRuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 9 GiB")

    monkeypatch.setattr(memory, "check", exhausted)
    assert td_jax.main([*SMALL, "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "out of memory with n_envs 64" in err[0] and "lower --n-envs" in err[0], err

    def other(*_):  # noqa: ANN002, ANN202
        raise jax.errors.JaxRuntimeError("INTERNAL: something else")

    monkeypatch.setattr(memory, "check", other)
    with pytest.raises(jax.errors.JaxRuntimeError, match="INTERNAL"):
        td_jax.main([*SMALL, "--out", str(tmp_path / "other")])


def test_a_stop_while_the_training_call_compiles_is_kept_for_a_checkpoint(tmp_path, monkeypatch, capsys):
    # Ctrl-C raised out of XLA's compiling ended in a crash at exit (SIGSEGV): the run's own
    # handler takes it from before the ahead compile, so the run stops at move 0 with a checkpoint
    import signal

    monkeypatch.setattr(memory, "check", lambda *_: signal.raise_signal(signal.SIGINT))
    assert td_jax.main([*SMALL, "--out", str(tmp_path)]) == 130
    assert "stopped at move 0; checkpoint in" in capsys.readouterr().err
    assert (tmp_path / "td_jax" / "Zudecken32-seed0" / "checkpoint.npz").is_file()
