"""The Gymnasium adapter of the JAX rules: ``quadrat_env_jax/<Name>-v0`` for ``gym.make`` and
``gym.make_vec``, built on Gymnasium's ``FuncEnv``, ``FunctionalJaxEnv`` and
``FunctionalJaxVectorEnv`` as Gymnasium's own JAX envs are (``tabular/Blackjack-v0``).

What differs from Gymnasium's classes, and why: the reset options (``"deck"``, and per env
``"decks"`` and ``"reset_mask"``) replay a deal exactly, as the compiled envs do; ``step`` checks its
input and raises the compiled envs' errors (outside ``jit`` an error can be raised); infos carry the
legal-action mask; and the batched autoreset handles a state that is a pytree, not one array.
Observations are jax arrays (``metadata["jax"]``), equal to the compiled env's to the bit.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np
from gymnasium import spaces
from gymnasium.envs.functional_jax_env import FunctionalJaxEnv, FunctionalJaxVectorEnv
from gymnasium.experimental.functional import FuncEnv
from gymnasium.vector import AutoresetMode

from quadrat_env.core.checks import is_seed, whole
from quadrat_env.core.env import ENV_KWARGS, check_options
from quadrat_env.core.jax_core import JaxPatience, State, pack_indices
from quadrat_env.core.jax_pool import DeckPool, auto_reset, deck_pool, where_rows
from quadrat_env.core.rules import IllegalMove
from quadrat_env.core.vector import RESET_OPTIONS as VECTOR_OPTIONS
from quadrat_env.registry import compiled_id, rules_for, spec_for

#: The keys of an env's infos (``PatienceFuncEnv.state_info``).
INFO_KEYS = ("action_mask", "cards_left", "illegal_action", "won")


class PatienceFuncEnv(FuncEnv):
    """Gymnasium's functional env over one ID's ``JaxPatience``."""

    def __init__(self, core: JaxPatience) -> None:
        super().__init__()
        self.core = core
        self.observation_space = spaces.Box(0.0, 1.0, core.observation_shape, np.float32)
        self.action_space = spaces.Discrete(core.num_actions)

    def initial(self, rng: Any, params: Any = None) -> State:
        return self.core.init(rng)

    def transition(self, state: State, action: Any, rng: Any, params: Any = None) -> State:
        return self.core.step(state, action)

    def observation(self, state: State, rng: Any, params: Any = None) -> jax.Array:
        return self.core.observe(state)

    def reward(self, state: State, action: Any, next_state: State, rng: Any, params: Any = None) -> jax.Array:
        return next_state.reward

    def terminal(self, state: State, rng: Any, params: Any = None) -> jax.Array:
        return state.terminated

    def state_info(self, state: State, params: Any = None) -> dict[str, Any]:
        return {"action_mask": state.legal_action_mask.astype(jnp.int8), "cards_left": state.cards_left,
                "illegal_action": state.illegal, "won": state.won}  # fmt: skip

    def transition_info(self, state: State, action: Any, next_state: State, params: Any = None) -> dict:
        return self.state_info(next_state)


def functional_env(env_id: str, **kwargs: Any) -> JaxPatience:
    """The functional API of ``env_id`` (``quadrat_env.functional.make`` documents it)."""
    base = compiled_id(env_id)
    spec = spec_for(base)
    if spec.jax_rules is None:
        raise ValueError(f"{env_id}: the game {spec.name!r} has no JAX rules")
    env_kwargs = {k: kwargs.pop(k) for k in ENV_KWARGS if k in kwargs}
    env_kwargs.setdefault("max_episode_steps", spec.max_episode_steps)
    module, name = spec.jax_rules.split(":")
    rules = getattr(importlib.import_module(module), name)(rules_for(base, **kwargs))
    return JaxPatience(rules, has_end_action=spec.env_class.has_end_action, **env_kwargs)


def _core(env_id: str, kwargs: dict[str, Any]) -> tuple[JaxPatience, Any]:
    """The functional env of ``env_id`` with ``kwargs`` (a Gymnasium env's: no time limit of its
    own unless given, no pictures), and the compiled rules it equals (for deck checks and names)."""
    if kwargs.get("render_mode") is not None:
        raise ValueError(f"render_mode={kwargs['render_mode']!r}: the JAX envs draw no pictures; "
                         f"{compiled_id(env_id)} (the compiled rules) draws them")  # fmt: skip
    kwargs.pop("render_mode", None)
    game = rules_for(compiled_id(env_id), **{k: v for k, v in kwargs.items() if k not in ENV_KWARGS})
    return functional_env(env_id, max_episode_steps=kwargs.pop("max_episode_steps", None), **kwargs), game


def _check_action(action: Any, n: int) -> int:
    """An action as the compiled env takes it: an integer (not a bool) in range, else ValueError."""
    if isinstance(action, (jax.Array, np.ndarray)) and action.shape == () and action.dtype.kind in "iu":
        action = int(action)
    if (
        isinstance(action, (bool, np.bool_))
        or not isinstance(action, (int, np.integer))
        or not 0 <= action < n
    ):
        raise ValueError(f"action {action!r} is outside the action space Discrete({n}) "
                         f"(expected an integer 0..{n - 1})")  # fmt: skip
    return int(action)


def _key(seed: int) -> jax.Array:
    """A PRNG key of a seed (``PRNGKey(seed)`` as Gymnasium's JAX envs, for seeds of 32 bits)."""
    if seed >= 2**32:
        seed = int(np.random.SeedSequence(seed).generate_state(1)[0])
    return jax.random.PRNGKey(seed)


class PatienceJaxEnv(FunctionalJaxEnv):
    """One deal on the JAX rules (``gym.make("quadrat_env_jax/<Name>-v0")``); see the compiled env
    of the same name for the spec (``quadrat_env.registry.compiled_id``)."""

    metadata = {"render_modes": [], "jax": True}  # noqa: RUF012 - Gymnasium's own style

    def __init__(self, env_id: str, **kwargs: Any) -> None:
        self.core, self.game = _core(env_id, kwargs)
        func = PatienceFuncEnv(self.core)
        func.transform(jax.jit)
        super().__init__(func, metadata=self.metadata)
        self._init_deck = jax.jit(self.core.init_deck)
        self._random_deck = jax.jit(self.core.random_deck)
        self._pack = np.array(self.game.pack, dtype=np.int64)
        self._dealt: tuple[int, ...] = ()

    def reset(self, *, seed: int | None = None, options: Mapping[str, Any] | None = None) -> tuple[Any, dict]:
        # everything checked before the generator or the state changes
        if not is_seed(seed):
            raise ValueError(f"seed must be None or a whole number >= 0, got {seed!r}")
        deck = check_options(options, ("deck",), self.game).get("deck")
        gym.Env.reset(self, seed=None if seed is None else int(seed))
        if seed is not None:
            self.rng = _key(int(seed))
        key, self.rng = jax.random.split(self.rng)
        if deck is None:
            deck = tuple(self._pack[np.asarray(self._random_deck(key))].tolist())
        self.state = self._init_deck(pack_indices(deck, self.game.pack))
        self._dealt = deck
        return self.func_env.observation(self.state, None), _plain(self.func_env.state_info(self.state))

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        a = _check_action(action, self.core.num_actions)
        if not self._dealt:
            raise RuntimeError("step() called before reset(); call reset() first")
        if bool(self.state.terminated):
            raise RuntimeError("step() called after the episode ended; call reset() first")
        before = self.state
        obs, reward, terminated, _, info = super().step(a)
        if bool(self.state.illegal) and self.core.illegal_action == "raise":
            self.state = before  # nothing was changed
            raise IllegalMove(f"{self.game.name}: action {a} is not legal now; legal actions: "
                              f"{np.flatnonzero(self.action_masks()).tolist()}")  # fmt: skip
        return obs, reward, terminated, bool(self.state.truncated), _plain(info)

    def action_masks(self) -> np.ndarray:
        """Legal actions as a bool array (sb3-contrib's MaskablePPO calls this)."""
        if not self._dealt:
            raise RuntimeError("action_masks() called before reset(); call reset() first")
        return np.asarray(self.state.legal_action_mask, dtype=bool)

    @property
    def deck(self) -> tuple[str, ...]:
        """The current deal as card codes, for ``reset(options={"deck": env.deck})`` replays."""
        from quadrat_env.cards import card_code

        return tuple(card_code(c) for c in self._dealt)


def _plain(info: dict[str, Any]) -> dict[str, Any]:
    """The compiled env's info types: an int8 numpy mask, Python scalars."""
    return {"action_mask": np.asarray(info["action_mask"], dtype=np.int8),
            "cards_left": int(info["cards_left"]),
            "illegal_action": bool(info["illegal_action"]), "won": bool(info["won"])}  # fmt: skip


#: A batched env's pool holds this many decks a row, dealt ahead: refilled with ``POOL_ROUNDS - 1``
#: decks a row once fewer than a row each are left (under random play, Zudecken: about every 36 steps).
POOL_ROUNDS = 4


class PatienceJaxVectorEnv(FunctionalJaxVectorEnv):
    """N deals on the JAX rules, stepped in one jitted call (``gym.make_vec("quadrat_env_jax/...",
    num_envs=N)``), autoreset on the next step as the compiled batched env does."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": [], "jax": True}  # noqa: RUF012

    def __init__(self, env_id: str, num_envs: int = 1, **kwargs: Any) -> None:
        num_envs = whole("num_envs", num_envs, minimum=1)
        core, self.game = _core(env_id, kwargs)
        self.core = core
        super().__init__(PatienceFuncEnv(core), num_envs, max_episode_steps=core.max_episode_steps,
                         metadata=self.metadata)  # fmt: skip
        self._pack = np.array(self.game.pack, dtype=np.int64)
        self._reset_rows = jax.jit(self._reset_rows_fn)
        # the pool is the env's own: given to the step to reuse (donated), not copied every step;
        # under "raise" a step may be refused and must leave the pool as it was, so it is kept
        donate = () if core.illegal_action == "raise" else (2,)
        self._step = jax.jit(self._step_fn, donate_argnums=donate)
        self._infos_of = jax.jit(self._infos_fn)
        self._started, self._pool = False, None
        present = jnp.ones(num_envs, dtype=bool)
        self._present = {"_" + key: present for key in INFO_KEYS}

    def _reset_rows_fn(self, state: State, key: jax.Array, decks: jax.Array, given: jax.Array,
                       rows: jax.Array) -> tuple[State, jax.Array]:  # fmt: skip
        random = jax.vmap(self.core.random_deck)(jax.random.split(key, self.num_envs))
        fresh = jax.vmap(self.core.init_deck)(jnp.where(given[:, None], decks, random))
        new = where_rows(rows, fresh, state)
        return new, jax.vmap(self.core.observe)(new)

    def _step_fn(self, state: State, actions: jax.Array, pool: DeckPool, done: jax.Array) -> tuple:
        """A step of every env in one jitted call: the states, observations, the pool, whether each
        env's deal ended, the infos' action masks and the first env whose action was illegal (-1:
        none); the other infos are the states' own arrays."""
        stepped = jax.vmap(self.core.step)(state, actions)
        # an env that ended last step starts a new deal now, from decks drawn and dealt ahead: no
        # shuffle or deal for the envs that go on (quadrat_env.core.jax_pool)
        new, pool = auto_reset(self.core, stepped, done, pool)
        ended = new.terminated | new.truncated
        first_bad = jnp.int32(-1)
        if self.core.illegal_action == "raise":  # a setting, fixed when traced: the others never refuse
            bad = stepped.illegal & ~done
            first_bad = jnp.where(bad.any(), jnp.argmax(bad), -1)
        mask = _masks_of(new, ended).astype(jnp.int8)
        return new, jax.vmap(self.core.observe)(new), pool, ended, mask, first_bad

    def reset(self, *, seed: int | None = None, options: Mapping[str, Any] | None = None) -> tuple[Any, dict]:
        """Deal every env (or those in ``options["reset_mask"]``); ``options``: ``"deck"`` (one deck
        for every env reset), ``"decks"`` (one deck or None per env). Bad input changes nothing."""
        if not is_seed(seed):
            raise ValueError(f"seed must be None or a whole number >= 0, got {seed!r}")
        opts = check_options(options, VECTOR_OPTIONS, self.game, self.num_envs)
        n = self.num_envs
        rows = opts.get("reset_mask", np.ones(n, dtype=bool))
        if not self._started and not rows.all():
            raise ValueError("the first reset deals every env (no reset_mask)")
        listed = opts.get("decks", [opts.get("deck")] * n)
        given = np.array([d is not None for d in listed])
        decks = np.zeros((n, self.game.pack_size), dtype=np.int64)
        for i, d in enumerate(listed):
            decks[i] = self._pack if d is None else d
        if seed is not None or self._pool is None:
            self.rng = self.rng if seed is None else _key(int(seed))
            draw, self.rng = jax.random.split(self.rng)
            # a buffer of its own for every leaf (a deal's four false flags may share one), as a
            # donated argument must have
            self._pool = jax.tree_util.tree_map(jnp.copy, deck_pool(self.core, draw, POOL_ROUNDS * n))
        key, self.rng = jax.random.split(self.rng)
        state = (
            self.state
            if self._started
            else jax.vmap(self.core.init_deck)(pack_indices(decks, self.game.pack))
        )
        self.state, obs = self._reset_rows(state, key, pack_indices(decks, self.game.pack), given, rows)
        self.prev_done = jnp.where(rows, False, self.prev_done)
        self.steps = self.state.elapsed  # Gymnasium's step counts: the rules count them here
        self._started = True
        return obs, self._infos()

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict]:
        if not self._started:
            raise RuntimeError("step() called before reset(); call reset() first")
        acts = np.asarray(actions)
        n, a = self.num_envs, self.core.num_actions
        if acts.shape != (n,) or acts.dtype.kind not in "iu" or ((acts < 0) | (acts >= a)).any():
            raise ValueError(f"actions must be {n} integers in 0..{a - 1}, got {actions!r}")
        state, obs, pool, ended, mask, first_bad = self._step(
            self.state, acts.astype(np.int32), self._pool, self.prev_done
        )
        if self.core.illegal_action == "raise" and int(first_bad) >= 0:
            row = int(first_bad)
            legal = np.flatnonzero(np.asarray(self.state.legal_action_mask[row])).tolist()
            raise IllegalMove(f"{self.game.name}: action {int(acts[row])} of env {row} is not legal now; "
                              f"legal actions: {legal}")  # fmt: skip
        self.state, self._pool, self.prev_done = state, pool, ended
        self.steps = state.elapsed
        info = {"action_mask": mask, "cards_left": state.cards_left, "illegal_action": state.illegal,
                "won": state.won, **self._present}  # fmt: skip
        return obs, state.reward, state.terminated, state.truncated, info

    def action_masks(self) -> np.ndarray:
        """bool (num_envs, num_actions): each env's legal actions; every action for an env whose
        episode ended in the last step (its next action is ignored: a masked sampler cannot sample
        from an all-zero row), as the compiled batched env."""
        return np.asarray(self._masks(), dtype=bool)

    def _masks(self) -> jax.Array:
        return _masks_of(self.state, self.prev_done)

    def _infos(self) -> dict[str, Any]:
        return {**self._infos_of(self.state, self.prev_done), **self._present}

    def _infos_fn(self, state: State, prev_done: jax.Array) -> dict[str, Any]:
        """The infos of a step, jitted (op by op they cost about as much as the step); the "_"
        keys (every env has each) are made once, in ``__init__``."""
        masks = _masks_of(state, prev_done).astype(jnp.int8)
        return {**PatienceFuncEnv.state_info(self.func_env, state), "action_mask": masks}


def _masks_of(state: State, done: jax.Array) -> jax.Array:
    """Each env's legal actions, every action for an env whose deal ended last step (its next
    action is ignored)."""
    return state.legal_action_mask | done[:, None]
