"""The optimal agent's solved table on disk: read back to the same values, and a damaged, foreign
or unwritable cache costs time, never a value or an error."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from quadrat_env.agents.zudecken import optimal
from quadrat_env.agents.zudecken.exact import ExactSolver
from quadrat_env.agents.zudecken.optimal import OptimalAgent, load_table, save_table

from quadrat_env.core.jit import CacheWarning

N = 5
START = (0, (1 << 4 * N) - 1)  # no upcard, every card unseen


@pytest.fixture(scope="module")
def solved() -> ExactSolver:
    solver = ExactSolver(N)
    solver.win_rate()
    return solver


def test_a_kept_table_gives_every_move_value_without_solving(solved, tmp_path):
    save_table(solved, tmp_path / "t.npz")
    fresh = ExactSolver(N)
    assert load_table(fresh, tmp_path / "t.npz")
    kept = fresh.positions
    assert kept == solved.census()[:3].sum() < solved.positions  # the positions after a move only
    assert fresh.value(*START) == solved.value(*START) == pytest.approx(0.908473288689, abs=1e-12)
    table = 0b1111 << 0  # four upcards of the first suit, the rest unseen
    unseen = START[1] & ~table
    for group in fresh.groups(table):  # every move's value is a look-up
        assert fresh.value(table & ~group, unseen) == solved.value(table & ~group, unseen)
    assert fresh.positions == kept


def _forge_keys_header(path, shape) -> None:  # noqa: ANN001
    """keys.npy's header claims ``shape``; its bytes stay the real (small) array's."""
    import io
    import zipfile

    with zipfile.ZipFile(path) as z:
        members = {name: z.read(name) for name in z.namelist()}
    with np.load(path) as f:
        keys = f["keys"]
    forged = io.BytesIO()
    np.lib.format.write_array_header_1_0(forged, {"descr": "<i8", "fortran_order": False, "shape": shape})
    members["keys.npy"] = forged.getvalue() + keys.tobytes()
    with zipfile.ZipFile(path, "w") as z:
        for name, body in members.items():
            z.writestr(name, body)


@pytest.mark.parametrize("damage", ["cut", "noise", "other rules", "edited values", "forged header"])
def test_a_damaged_or_foreign_table_is_ignored_with_one_warning(solved, tmp_path, damage):
    path = tmp_path / "t.npz"
    if damage == "other rules":
        save_table(ExactSolver(N, win="dealt"), path)
    else:
        save_table(solved, path)
    data = path.read_bytes()
    if damage == "cut":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "noise":
        path.write_bytes(np.random.default_rng(0).bytes(len(data)))
    elif damage == "forged header":  # 10^11 rows: 1.46 TiB if believed
        _forge_keys_header(path, (10**11, 2))
    elif damage == "edited values":
        with np.load(path) as f:
            arrays = dict(f)
        arrays["values"] = arrays["values"] * 0.5
        np.savez(path, **arrays)
    fresh = ExactSolver(N)
    with pytest.warns(CacheWarning, match="not used"):
        assert not load_table(fresh, path)
    assert fresh.positions == 0 and fresh.win_rate() == pytest.approx(0.908473288689, abs=1e-12)


def test_no_table_is_no_warning_and_an_unwritable_folder_only_warns(solved, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not load_table(ExactSolver(N), tmp_path / "none.npz")
    (tmp_path / "file").write_text("not a folder")
    with pytest.warns(CacheWarning, match="QUADRAT_ENV_CACHE"):
        save_table(solved, tmp_path / "file" / "t.npz")
    assert (tmp_path / "file").read_text() == "not a folder"


def late_position(agent: OptimalAgent) -> tuple[np.ndarray, np.ndarray]:
    """A 32-card position with at most 10 cards unseen and a choice, by the first legal moves."""
    env = gym.make("quadrat_env/Zudecken32-v0")
    for seed in range(100):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            mask = info["action_mask"]
            if bin(agent.masks(obs)[1]).count("1") <= 10 and mask[: len(agent.groups)].sum() > 1:
                return obs, mask
            obs, _, done, _, info = env.step(int(np.flatnonzero(mask)[0]))
    raise AssertionError("no late position with a choice")


def test_the_agent_keeps_its_table_and_a_later_agent_starts_from_it(tmp_path, monkeypatch):
    """The whole-table solve is cut to one late position's subtree here (the whole 32-card table
    takes half a minute): what the agent solved is what a later agent reads, to the same values."""
    monkeypatch.setenv("QUADRAT_ENV_CACHE", str(tmp_path))
    obs, mask = late_position(OptimalAgent("quadrat_env/Zudecken32-v0", cache=False))
    table, unseen = OptimalAgent("quadrat_env/Zudecken32-v0", cache=False).masks(obs)

    def late_subtree(self: ExactSolver) -> float:  # the whole-table solve, cut to this position
        return max(self.value(table & ~g, unseen) for g in self.groups(table))

    monkeypatch.setattr(ExactSolver, "win_rate", late_subtree)
    first = OptimalAgent("quadrat_env/Zudecken32-v0")
    values = first.action_values(obs, mask)
    assert first.solved and list(tmp_path.glob("zudecken-exact-8-*.npz")) == [
        optimal.table_file(first.solver)
    ]
    later = OptimalAgent("quadrat_env/Zudecken32-v0")
    assert later.solved and later.solver.positions > 0
    assert later.action_values(obs, mask) == values
