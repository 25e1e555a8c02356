"""Helpers and fixtures shared by the test folders."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from quadrat_env.cards import PACKS, parse_deck

# One compute thread a test worker. `make test` runs a worker a core; torch's and XLA's thread pools,
# a thread a core in each worker, then fight over the same cores, and the tests that play models or
# train run slower (compare `pytest -n 2 --durations=20` with and without OMP_NUM_THREADS=2 set).
# Set here, before a test imports torch or JAX, as both read these when they start; processes a test
# starts inherit them.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    xla = os.environ.get("XLA_FLAGS", "")
    if "intra_op_parallelism_threads" not in xla:  # a user's own XLA thread setting wins, as above
        os.environ["XLA_FLAGS"] = (
            f"{xla} --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1".strip()
        )

# JAX's persistent compilation cache, shared by the test workers and the commands the tests start:
# the JAX learners' tests compile the same programs in several processes, and a later run finds them
# compiled (measured, the four JAX test files on 2 workers: 2 min 32 s without it, 2 min 4 s with an
# empty cache, 1 min 6 s with a warm one). JAX keys an entry by the program, its options, its own
# version and the device, so a stale entry is never used; a damaged one is compiled again.
if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    _cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "quadrat_env" / "jax-tests"
    os.environ["JAX_COMPILATION_CACHE_DIR"] = str(_cache)
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")  # the tests' programs are small
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")
    # a size limit turns on the cache's file lock: the test workers (make test) and the processes a
    # command starts read and write one folder, and without the lock one may read another's
    # half-written entry (then JAX warns and compiles again). Far above what the suite writes.
    os.environ.setdefault("JAX_COMPILATION_CACHE_MAX_SIZE", str(4 << 30))


def deck_starting(codes: str, pack_size: int = 52) -> tuple[int, ...]:
    """A full deck that deals ``codes`` first, then the rest of the pack in pack order."""
    head = parse_deck(codes)
    return head + tuple(c for c in PACKS[pack_size] if c not in head)


def play_out(game, deck, pick: Callable[[tuple[int, ...]], int] = lambda m: m[0]):
    """Play ``deck`` to the end, choosing with ``pick`` among the legal moves."""
    return play_from(game, game.start(deck), pick)


def play_from(game, state, pick: Callable[[tuple[int, ...]], int] = lambda m: m[0]):
    """Play on from ``state`` to the end, choosing with ``pick`` among the legal moves."""
    while moves := game.legal_moves(state):
        state = game.play(state, pick(moves))
    return state


def always_play(moves: tuple[int, ...]) -> int:
    """Quadrille: put the discard top on a pile when it fits (highest number), else deal."""
    return moves[-1]


def in_own_process(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` in a fresh process, as each command runs: a Ray driver there can neither
    end the test run (Ray's driver ends its process on some internal failures, exit status 1 and no
    message) nor leave Ray's signal handlers in it. A process that dies is an error here."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(fn, *args, **kwargs).result()


def pytest_addoption(parser):
    parser.addoption("--regen-images", action="store_true", help="rewrite tests/data/*.png")


@pytest.fixture(scope="session", autouse=True)
def _test_files_in_temporary_folders(tmp_path_factory):
    """What the tests write goes to this test session's folders: the optimal agent's solved tables
    (not the user's cache), and SB3's log folder of a ``learn`` without one (verbose 0, no
    tensorboard: else an empty ``$TMPDIR/SB3-<time>`` folder per call)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("QUADRAT_ENV_CACHE", str(tmp_path_factory.mktemp("solved-tables")))
        mp.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3-logs")))
        yield


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """PPO and MaskablePPO trained on Zudecken for a few hundred steps, laid out as committed models."""
    import yaml
    from quadrat_env.experiments import train

    root = tmp_path_factory.mktemp("models")
    (root / "seeds").mkdir()
    for algo in train.ALGOS:
        run = root / "runs" / algo
        train.main(["--env", "quadrat_env/Zudecken-v0", "--algo", algo, "--seed", "1", "--timesteps", "256",
                    "--n-envs", "2", "--out", str(run), "--no-progress"])  # fmt: skip
        folder = run / algo / "Zudecken-seed1"
        config = yaml.safe_load((folder / "config.yml").read_text())
        assert config["seed"] == 1 and config["n_timesteps"] == 256 and config["n_envs"] == 2
        assert list((folder / "monitor").glob("*.monitor.csv")) and (folder / "tb").is_dir()
        (folder / "model.zip").rename(root / f"Zudecken-{algo}.zip")
    return root


RESULTS = Path(__file__).resolve().parents[1] / "results"


def _results() -> dict[str, str]:
    return {str(p.relative_to(RESULTS)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(RESULTS.rglob("*")) if p.is_file()}  # fmt: skip


@pytest.fixture(scope="session", autouse=True)
def results_stay_as_committed() -> Iterator[None]:
    """No test writes into the repository's ``results/`` (a test run's 2-deal table once replaced
    a 1,000-deal one there): checked over the whole session, an error at its end if one did."""
    before = _results()
    yield
    after = _results()  # once: hashing every results file for each of them took a minute
    changed = sorted(k for k in {*before, *after} if before.get(k) != after.get(k))
    assert not changed, f"tests changed results/: {changed}"


@pytest.fixture
def drawn(monkeypatch):
    """The smallest text (phone px) of every figure drawn in the test, by ``plots.png``; a
    ``SmallText`` warning is an error."""
    import warnings

    from quadrat_env.experiments.common import plots

    sizes: list[float] = []
    png = plots.png

    def measured(fig, dpi=plots.DPI):  # noqa: ANN001, ANN202
        sizes.append(plots.smallest_text_px(fig, dpi))
        return png(fig, dpi)

    monkeypatch.setattr(plots, "png", measured)
    with warnings.catch_warnings():
        warnings.simplefilter("error", plots.SmallText)
        yield sizes
