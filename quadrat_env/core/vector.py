"""The batched adapter shared by every game: N deals stepped at once, one compiled pass per step.

A game's batched env subclasses ``PatienceVectorEnv`` and names its single-env class; the
deals are rows of one state array, stepped by the game's compiled rules (the same code the single
env runs, ``quadrat_env.core.kernel``). Seeding, autoreset, rewards, masks, infos and every
input check are common, and mirror ``PatienceEnv`` exactly: env ``i`` of
a batch behaves step for step like a single env wrapped by ``gym.make`` (with its ``TimeLimit``)
inside ``gymnasium.vector.SyncVectorEnv``. The tests check that.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from quadrat_env.core import kernel as k
from quadrat_env.core.checks import is_seed, whole
from quadrat_env.core.env import RENDER_MODES, PatienceEnv, check_options
from quadrat_env.core.rules import IllegalMove

RESET_OPTIONS = ("deck", "decks", "reset_mask")
#: Env indices: an int array, or ``ALL`` (a slice: a view of every env, no gather).
Rows = np.ndarray | slice
ALL = slice(None)
#: Decks each env draws ahead from its generator at once (see ``_shuffled``).
QUEUE = 64
INFO_KEYS = ("action_mask", "cards_left", "illegal_action", "won")


def _autoreset_mode(mode: Any) -> AutoresetMode:
    """An ``AutoresetMode``, or its value or name as a string (``"SameStep"``, ``"SAME_STEP"``)."""
    if isinstance(mode, AutoresetMode):
        return mode
    for m in AutoresetMode:
        if isinstance(mode, str) and mode in (m.value, m.name):
            return m
    raise ValueError(f"autoreset_mode must be one of {[m.name for m in AutoresetMode]}, got {mode!r}")


class PatienceVectorEnv(VectorEnv):
    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": [m for m in RENDER_MODES if m != "human"],  # no window per deal
        "render_fps": 4,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }
    #: The single-env class whose rules, spaces, checks and pictures this batch shares.
    single_env_class: ClassVar[type[PatienceEnv]]

    def __init__(
        self,
        num_envs: int = 1,
        *,
        max_episode_steps: int | None = None,
        copy: bool = True,
        render_mode: str | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        **kwargs: Any,
    ) -> None:
        num_envs = whole("num_envs", num_envs, minimum=1)
        self.autoreset_mode = _autoreset_mode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        # (the single env below names the extra a picture mode needs)
        if not any(render_mode is m or render_mode == m for m in (None, "ansi", "rgb_array")):
            raise ValueError(
                f"render_mode must be one of {[None, *self.metadata['render_modes']]} for a batched env "
                f"(a window per deal is not offered), got {render_mode!r}"
            )
        # The single env checks every other keyword and holds the rules, spaces, step settings
        # and pictures.
        self.single = self.single_env_class(render_mode=render_mode, max_episode_steps=max_episode_steps,
                                            **kwargs)  # fmt: skip
        self.game = self.single.game
        self.num_envs = int(num_envs)
        self.render_mode = render_mode
        self.max_episode_steps = self.single.max_episode_steps
        self.copy = copy
        self.single_observation_space = self.single.observation_space
        self.single_action_space = self.single.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.pack = np.array(self.game.pack, dtype=np.int64)
        self.n_actions = int(self.single_action_space.n)
        self.end_action = self.single.end_action
        n, p = self.num_envs, self.game.pack_size
        self.decks = np.zeros((n, p), dtype=np.int64)  # the deal of each env, index 0 dealt first
        self.states = np.zeros((n, self.game.state_size), dtype=np.int64)  # the rules' state rows
        self.obs = np.zeros((n, self.single_observation_space.shape[0]), dtype=np.float32)
        self.masks = np.zeros((n, self.n_actions), dtype=np.int8)
        self.episodes = np.zeros((n, k.EP_SIZE), dtype=np.int64)  # each env's bookkeeping (kernel.EP_*)
        self.autoreset = np.zeros(n, dtype=bool)
        self.rngs: list[np.random.Generator | None] = [None] * n
        # Each env's next decks; int8 (card codes < 52) keeps 4,096 queues at 14 MB.
        self.queue = np.zeros((n, QUEUE, p), dtype=np.int8)
        self.queue_pos = np.full(n, QUEUE, dtype=np.int64)
        self._packs = np.tile(self.pack.astype(np.int8), (QUEUE, 1))
        self._started = False

    @property
    def elapsed(self) -> np.ndarray:
        """Steps since each env's deal (a view)."""
        return self.episodes[:, k.EP_ELAPSED]

    def state(self, i: int) -> Any:
        """The rules' readable state of env ``i`` (as the single env's ``env.state``)."""
        return self.game.view(self.states[i])

    # -- Gymnasium API ---------------------------------------------------------------------------
    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal every env (or those in ``options["reset_mask"]``); env ``i`` gets ``seed + i``.

        ``options``: ``"deck"`` (one deck for every env reset), ``"decks"`` (one deck or None per
        env), ``"reset_mask"`` (bool array of shape (num_envs,)). Bad input raises and changes nothing.
        """
        seeds = self._seeds(seed)
        rows, given = self._reset_options(options)
        if not self._started and len(rows) < self.num_envs:
            raise ValueError("the first reset must deal every env: leave out options['reset_mask'] "
                             "(or make it all True)")  # fmt: skip
        for i in rows:
            if seeds[i] is not None or self.rngs[i] is None:
                self.rngs[i] = seeding.np_random(seeds[i])[0]
                self.queue_pos[i] = QUEUE  # decks drawn from the old generator are dropped
        decks = self._shuffled(rows, given)
        self._started = True
        self._restart(rows, decks)
        return self._out(self.obs), self._infos(rows, np.zeros(self.num_envs, dtype=bool),
                                                np.zeros(self.num_envs, dtype=bool))  # fmt: skip

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        acts = self._check_actions(actions)
        if not self._started:
            raise RuntimeError("step() called before reset(); call reset() first")
        n = self.num_envs
        mode = self.autoreset_mode
        if mode is AutoresetMode.DISABLED and self.autoreset.any():
            ended = np.flatnonzero(self.autoreset)[:5].tolist()
            raise RuntimeError(f"env(s) {ended} ended: reset them first "
                               "(reset(options={'reset_mask': ...})); nothing was stepped")  # fmt: skip
        # NEXT_STEP autoreset: these envs ignore their action and deal anew
        restart = self.autoreset.copy() if mode is AutoresetMode.NEXT_STEP else np.zeros(n, dtype=bool)
        live = ~restart
        rewards = np.zeros(n, dtype=np.float64)
        ep = self.episodes
        bad = self.game.kernel.act_rows(
            live, acts, self.states, self.obs, self.masks, self.game.params, ep, self.single.step_cfg,
            self.single.illegal_penalty, rewards,
        )  # fmt: skip
        if bad >= 0:  # "raise" mode: nothing was stepped
            rows = np.flatnonzero(live & (self.masks[np.arange(n), acts] == 0))[:5].tolist()
            raise IllegalMove(f"{self.game.name}: actions not legal now in env(s) {rows}: "
                              f"{acts[rows].tolist()}; nothing was stepped")  # fmt: skip
        terminated = live & (ep[:, k.EP_TERMINATED] == 1)
        truncated = live & (ep[:, k.EP_TRUNCATED] == 1)
        illegal = live & (ep[:, k.EP_ILLEGAL] == 1)
        won = live & (ep[:, k.EP_WON] == 1)
        reset_rows = np.flatnonzero(restart)
        if len(reset_rows):
            self._restart(reset_rows, self._shuffled(reset_rows))
        done = terminated | truncated
        if mode is AutoresetMode.SAME_STEP and done.any():
            info = self._same_step_reset(np.flatnonzero(done), illegal, won)
        else:
            self.autoreset = done  # NEXT_STEP: dealt on the next step; DISABLED: reset() is due
            if mode is AutoresetMode.NEXT_STEP:
                # The next action of a finished env is ignored, so every action is allowed: a masked
                # sampler (TorchRL's MaskedCategorical, sb3-contrib's) cannot sample from an all-zero row.
                self.masks[done] = 1
            info = self._infos(ALL, illegal, won)
        return self._out(self.obs), rewards, terminated, truncated, info

    def _same_step_reset(self, done: np.ndarray, illegal: np.ndarray, won: np.ndarray) -> dict[str, Any]:
        """SAME_STEP: deal the finished envs now. Their last observation and info go into
        ``info["final_obs"]`` and ``info["final_info"]``, laid out as SyncVectorEnv lays them out."""
        final_info = self._infos(done, illegal, won)
        final_obs = np.full(self.num_envs, None, dtype=object)
        for i in done.tolist():
            final_obs[i] = self.obs[i].copy()
        self._restart(done, self._shuffled(done))
        ended = np.zeros(self.num_envs, dtype=bool)
        ended[done] = True
        info = self._infos(ALL, illegal & ~ended, won & ~ended)
        info.update(final_obs=final_obs, _final_obs=ended, final_info=final_info, _final_info=ended.copy())
        return info

    def action_masks(self) -> np.ndarray:
        """Legal actions of every env as a bool array of shape (num_envs, n_actions)."""
        return self.masks.astype(bool)

    def render(self) -> tuple[Any, ...] | None:
        if self.render_mode is None:
            return None
        if not self._started:
            raise RuntimeError("render() called before reset(); call reset() first")
        draw = self.single.draw_rgb if self.render_mode == "rgb_array" else self.single.draw_text
        return tuple(draw(self.state(i)) for i in range(self.num_envs))

    def __copy__(self) -> PatienceVectorEnv:
        """A copy that shares nothing mutable (stepping one never changes the other)."""
        return copy.deepcopy(self)

    def close_extras(self, **kwargs: Any) -> None:
        self.single.close()

    # -- helpers ---------------------------------------------------------------------------------
    def _restart(self, rows: np.ndarray, decks: np.ndarray) -> None:
        self.decks[rows] = decks
        self.autoreset[rows] = False
        if not self.game.kernel.start_rows(np.asarray(rows, dtype=np.int64), decks, self.states, self.obs,
                                           self.masks, self.game.params, self.episodes,
                                           self.single.step_cfg):  # fmt: skip
            raise AssertionError(f"{self.game.name} dealt a start with no legal move")

    def _shuffled(self, rows: np.ndarray, given: Mapping[int, tuple[int, ...]] | None = None) -> np.ndarray:
        """New decks for ``rows``: the given ones, else the next deck each env's generator deals.

        The single env's reset deals ``np_random.permutation(pack)``. ``Generator.permuted`` over
        ``QUEUE`` copies of the pack, row by row, draws exactly the decks of ``QUEUE`` such resets
        in turn (the equivalence tests check it), at a fraction of the cost per deck; so each env
        keeps a queue of its next decks. (Its generator is therefore ahead of what it has dealt.)
        """
        given = given or {}
        shuffle = rows[[i not in given for i in rows.tolist()]] if given else rows
        empty = shuffle[self.queue_pos[shuffle] >= QUEUE]
        for i in empty.tolist():
            self.queue[i] = self.rngs[i].permuted(self._packs, axis=1)  # type: ignore[union-attr]
        self.queue_pos[empty] = 0
        decks = np.empty((len(rows), self.game.pack_size), dtype=np.int64)
        if len(shuffle) == len(rows):  # the usual case: no given decks
            decks[:] = self.queue[rows, self.queue_pos[rows]]
            self.queue_pos[rows] += 1
            return decks
        for j, i in enumerate(rows.tolist()):
            if i in given:
                decks[j] = given[i]
            else:
                decks[j] = self.queue[i, self.queue_pos[i]]
                self.queue_pos[i] += 1
        return decks

    def _out(self, array: np.ndarray) -> np.ndarray:
        return array.copy() if self.copy else array

    def _infos(self, rows: Rows, illegal: np.ndarray, won: np.ndarray) -> dict[str, Any]:
        n = self.num_envs
        present = np.zeros(n, dtype=bool)
        present[rows] = True
        cards = np.zeros(n, dtype=np.int64)
        cards[rows] = self.episodes[rows, k.EP_CARDS]
        if present.all():
            masks = self.masks.copy()
        else:
            masks = np.zeros_like(self.masks)
            masks[rows] = self.masks[rows]
        info: dict[str, Any] = {"action_mask": masks, "cards_left": cards,
                                "illegal_action": illegal & present, "won": won & present}  # fmt: skip
        for key in INFO_KEYS:
            info["_" + key] = present.copy()
        return info

    def _seeds(self, seed: int | Sequence[int | None] | None) -> list[int | None]:
        n = self.num_envs
        if seed is None:
            return [None] * n
        if is_seed(seed):
            return [int(seed) + i for i in range(n)]
        listed = isinstance(seed, Sequence) and not isinstance(seed, str) and len(seed) == n
        if listed and all(map(is_seed, seed)):
            return [None if s is None else int(s) for s in seed]
        raise ValueError(f"seed must be None, a whole number >= 0 or a list of {n} of them (or None), "
                         f"got {seed!r}")  # fmt: skip

    def _reset_options(
        self, options: Mapping[str, Any] | None
    ) -> tuple[np.ndarray, dict[int, tuple[int, ...]]]:
        """Rows to reset and the decks given for some of them; all checks, no change."""
        opts = check_options(options, RESET_OPTIONS, self.game, self.num_envs)
        mask = opts.get("reset_mask")
        rows = np.arange(self.num_envs) if mask is None else np.flatnonzero(mask)
        per_env = opts.get("decks") or [opts.get("deck")] * self.num_envs
        return rows, {int(i): per_env[i] for i in rows if per_env[i] is not None}

    def _check_actions(self, actions: Any) -> np.ndarray:
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(
                f"actions must be an integer array of shape ({self.num_envs},), got "
                f"{type(actions).__name__} with shape {acts.shape} and dtype {acts.dtype}"
            )
        bad = np.flatnonzero((acts < 0) | (acts >= self.n_actions))
        if len(bad):
            raise ValueError(f"actions out of range 0..{self.n_actions - 1} in env(s) {bad[:5].tolist()}: "
                             f"{acts[bad[:5]].tolist()}")  # fmt: skip
        return acts.astype(np.int64, copy=False)
