"""The optimal Zudecken player: each legal move's exact value from ``quadrat_env.agents.zudecken.exact``.

The values every move choice needs (the positions after a move) are kept on disk once solved, in
``$QUADRAT_ENV_CACHE`` (default ``$XDG_CACHE_HOME/quadrat_env``, else ``~/.cache/quadrat_env``): the
32-card table is 1.6M positions, 39 MB, read in about a second where solving it takes about 30 s
on two cores.
A cache file that cannot be read, is damaged or was written by other solver code is ignored with
one ``CacheWarning`` and solved again; one that cannot be written costs
only the time.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
import warnings
import zipfile
from pathlib import Path

import numpy as np
from quadrat_env.agents.base import Agent
from quadrat_env.agents.zudecken.exact import ExactSolver, code_fingerprint

from quadrat_env.core.jit import CacheWarning
from quadrat_env.files import atomic_open, load_npz
from quadrat_env.registry import rules_for

CACHE_FORMAT = 1


def cache_dir() -> Path:
    """Where solved tables are kept: ``$QUADRAT_ENV_CACHE``, ``$XDG_CACHE_HOME/quadrat_env`` or
    ``~/.cache/quadrat_env``."""
    if os.environ.get("QUADRAT_ENV_CACHE"):
        return Path(os.environ["QUADRAT_ENV_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "quadrat_env"


def table_file(solver: ExactSolver) -> Path:
    return cache_dir() / f"zudecken-exact-{solver.n}-{solver.win}-{solver.cover}.npz"


def _stamp(solver: ExactSolver) -> str:
    """What the values depend on: the file format, the pack and rules, and the solver's code."""
    what = (CACHE_FORMAT, solver.n, solver.win, solver.cover, solver.symmetric, code_fingerprint())
    return hashlib.sha256(repr(what).encode()).hexdigest()


def _digest(keys: np.ndarray, values: np.ndarray) -> str:
    return hashlib.sha256(keys.tobytes() + values.tobytes()).hexdigest()


def load_table(solver: ExactSolver, path: Path) -> bool:
    """Memoise the values kept in ``path``; False (with a warning if the file is there but unusable)
    if there are none to use."""
    try:
        f = load_npz(path)  # headers checked before anything is allocated
        keys, values, stamp, digest = f["keys"], f["values"], str(f["stamp"]), str(f["digest"])
        if stamp != _stamp(solver):
            raise ValueError("written by other solver code or for other rules")
        if (
            keys.dtype != np.int64
            or keys.ndim != 2
            or keys.shape[1:] != (2,)
            or values.shape != keys.shape[:1]
        ):
            raise ValueError("arrays of the wrong shape")
        if values.dtype != np.float64 or digest != _digest(keys, values):
            raise ValueError("its contents do not match their checksum")
    except FileNotFoundError:
        return False
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:
        warnings.warn(
            f"the solved table {path} is not used ({err}); solving again", CacheWarning, stacklevel=3
        )
        return False
    solver.preload(keys, values)
    return True


def save_table(solver: ExactSolver, path: Path) -> None:
    """Keep the solver's values of the positions after a move in ``path`` (atomically); a failure
    only warns."""
    keys, values = solver.afterstates()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(path, "wb") as f:
            np.savez(f, keys=keys, values=values, stamp=_stamp(solver), digest=_digest(keys, values))
    except OSError as err:
        warnings.warn(f"the solved table could not be kept in {path} ({err}); set QUADRAT_ENV_CACHE to a "
                      "writable folder to keep it between runs", CacheWarning, stacklevel=3)  # fmt: skip


class OptimalAgent(Agent):
    """Plays the optimal policy of a Zudecken variant from any position: each legal group's exact
    value, the best one covered (ties within 1e-12 to the lowest action). Values are computed as play
    reaches them and kept. With ``cache`` (the default), the first decision solves the whole table
    (32 cards: 24.4M positions, ~30 s on two cores, 0.95 GB) and keeps what every later decision needs on disk
    (``cache_dir``), so later agents start from it in about a second; without, values are
    solved as play reaches them. Packs over ``max_ranks`` ranks a suit are refused (default 10: the
    40-card table, 14.1M positions, about 13 minutes and 0.9 GB on two cores to solve; 11 ranks take
    about 37 minutes and 1.3 GB, ``results/zudecken_exact.json``)."""

    name = "optimal"

    def __init__(self, env_id: str, max_ranks: int = 10, cache: bool = True, **env_kwargs: object) -> None:
        from quadrat_env.slots.kernel import GROUPS

        game = rules_for(env_id, **env_kwargs)
        if not getattr(game, "match_rank", False):
            raise ValueError(f"{env_id}: OptimalAgent solves games whose cards match in suit or rank")
        ranks = sorted({c % 13 for c in game.pack})
        if len(ranks) > max_ranks:
            raise ValueError(f"{env_id}: {len(ranks)} ranks a suit; the optimal agent solves up to "
                             f"{max_ranks} ({4 * max_ranks} cards); use the planner")  # fmt: skip
        self.env_id, self.game, self.groups = env_id, game, GROUPS
        win = "cleared" if game.win_needs_clear else "dealt"
        self.solver = ExactSolver(len(ranks), win, "groups" if game.max_group == 4 else "pairs")
        # the env's card number -> the solver's (suit * ranks + the rank's place among the pack's)
        self.bit = {c: 1 << (c // 13 * len(ranks) + ranks.index(c % 13)) for c in game.pack}
        self.cache = cache
        self.solved = cache and load_table(self.solver, table_file(self.solver))

    def solve(self) -> None:
        """The whole table, once, kept on disk when ``cache`` is set."""
        if not self.solved:
            start = time.perf_counter()
            where = f"; kept in {table_file(self.solver)}" if self.cache else ""
            print(f"optimal agent: solving the exact table of {self.env_id} once (on 2 cores: 30-90 s for "
                  f"32 cards, 13 minutes for 40{where})", file=sys.stderr, flush=True)  # fmt: skip
            self.solver.win_rate()
            print(
                f"optimal agent: solved in {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True
            )
            if self.cache:
                save_table(self.solver, table_file(self.solver))
            self.solved = True

    def optimum(self) -> float:
        """The exact optimal win rate from a random deal (solving the table first if need be)."""
        self.solve()
        return self.solver.win_rate()

    def masks(self, observation: np.ndarray) -> tuple[int, int]:
        """The solver's (table, unseen) card masks of an observation."""
        state, unseen = self.game.decode(observation)
        table = sum(self.bit[c] for c in state.slots if c >= 0)
        return table, sum(self.bit[int(c)] for c in unseen)

    def action_values(self, observation: np.ndarray, mask: np.ndarray) -> dict[int, float]:
        """Each legal group action's optimal win probability."""
        if self.cache:
            self.solve()
        table, unseen = self.masks(observation)
        state, _ = self.game.decode(observation)
        out = {}
        for a in np.flatnonzero(np.asarray(mask)[: len(self.groups)]):
            group = sum(self.bit[state.slots[i]] for i in self.groups[a])
            out[int(a)] = self.solver.value(table & ~group, unseen)
        return out

    def move_values(self, observation: np.ndarray, mask: np.ndarray, moves: np.ndarray) -> np.ndarray:
        """``action_values`` for ``moves``, in their order ("end": 0)."""
        values = self.action_values(observation, mask)
        return np.array([values.get(int(m), 0.0) for m in moves])

    def act(self, observation: np.ndarray, mask: np.ndarray) -> int:
        values = self.action_values(observation, mask)
        if not values:  # only "end" is legal
            return int(np.flatnonzero(mask)[0])
        # moves whose values differ only by rounding (sums taken in another order) are ties: the
        # lowest action among them, so the choice does not depend on the order of summation
        best = max(values.values())
        return min(a for a, v in values.items() if v >= best - 1e-12)

    def __repr__(self) -> str:
        return f"OptimalAgent({self.env_id!r})"


def solvable(env_id: str, max_ranks: int = 10) -> bool:
    """Whether ``OptimalAgent`` plays ``env_id`` (a suit-or-rank game of at most ``max_ranks``
    ranks a suit)."""
    try:
        OptimalAgent(env_id, max_ranks=max_ranks, cache=False)
    except ValueError:
        return False
    return True
