"""The registry of games: each game's facts, reached by env ID (OpenSpiel's ``GameType`` role).

Code outside a game's folder never asks for a game by name or type; it asks the registry for the
game's ``GameSpec``, and for an ID's rules with ``rules_for`` (no env is made). A new
patience joins through ``register_game``, which also registers its IDs with Gymnasium:

    register_game(GameSpec(name="Toy", rules=toy_rules, env_class=ToyEnv,
                           vector_env_class=ToyVectorEnv, ids={"toy/Toy-v0": {}},
                           max_episode_steps=100))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from gymnasium.envs.registration import register, registry

from quadrat_env.core.env import PatienceEnv
from quadrat_env.core.rules import Rules
from quadrat_env.core.vector import PatienceVectorEnv


@dataclass(frozen=True)
class GameSpec:
    """What the rest of the package may know about a game."""

    #: Short name, e.g. ``"Zudecken"``.
    name: str
    #: The rules of a variant from its kwargs (the game's rule kwargs, e.g. ``n_cards``), the same
    #: rules the env of those kwargs plays.
    rules: Callable[..., Rules[Any]]
    #: The single env (its docstring is the spec) and the batched env.
    env_class: type[PatienceEnv]
    vector_env_class: type[PatienceVectorEnv]
    #: Registered IDs and the kwargs each passes to ``env_class`` (and to ``rules``).
    ids: Mapping[str, Mapping[str, Any]]
    max_episode_steps: int
    #: The game's rules in JAX, as ``"module:Class"`` (imported only when a JAX env is made, so
    #: ``import quadrat_env`` never imports jax): the class takes the game's ``Rules`` and gives
    #: ``quadrat_env.core.jax_core.JaxRules``. Each ID then also has its twin in ``JAX_NAMESPACE``.
    jax_rules: str | None = None
    #: More IDs of the game, each with its kwargs: the other rungs of a difficulty axis (Zudecken's
    #: packs of 4..13 ranks). Registered, made and tested as every ID; the benchmark's and the
    #: speed tables' rows are the ``ids`` alone (``env_ids(rungs=False)``), the ladder covers these.
    rungs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.ids:
            raise ValueError(f"game {self.name!r} registers no env ID")
        if not callable(self.rules):
            raise TypeError(f"game {self.name!r}: rules must be callable (kwargs -> Rules)")
        if not (isinstance(self.env_class, type) and issubclass(self.env_class, PatienceEnv)):
            raise TypeError(f"game {self.name!r}: env_class must subclass PatienceEnv")
        vec = self.vector_env_class
        if not (isinstance(vec, type) and issubclass(vec, PatienceVectorEnv)):
            raise TypeError(f"game {self.name!r}: vector_env_class must subclass PatienceVectorEnv")
        for name in ("ids", "rungs"):
            ids = {i: MappingProxyType(dict(k)) for i, k in getattr(self, name).items()}
            object.__setattr__(self, name, MappingProxyType(ids))
        both = set(self.ids) & set(self.rungs)
        if both:
            raise ValueError(f"game {self.name!r}: {sorted(both)} both an ID and a rung")

    @property
    def every_id(self) -> Mapping[str, Mapping[str, Any]]:
        """``ids`` and ``rungs`` together: every ID the game registers, with its kwargs."""
        return MappingProxyType({**self.ids, **self.rungs})


_GAMES: dict[str, GameSpec] = {}  # env ID -> spec
#: The JAX envs' namespace: ``quadrat_env/Zudecken-v0`` runs on JAX as ``quadrat_env_jax/Zudecken-v0``.
JAX_NAMESPACE = "quadrat_env_jax"
_JAX_IDS: dict[str, str] = {}  # JAX env ID -> the ID of the same game on the compiled rules


def register_game(spec: GameSpec) -> None:
    """Register a game and its IDs with Gymnasium (``gym.make`` and ``gym.make_vec`` then work)."""
    taken = [i for i in spec.every_id if i in _GAMES and _GAMES[i] is not spec]
    if taken:
        raise ValueError(f"env ID(s) {taken} are already registered by game {_GAMES[taken[0]].name!r}")
    for env_id, kwargs in spec.every_id.items():
        _GAMES[env_id] = spec
        # The limit is the spec's alone: gym.make wraps TimeLimit (max_episode_steps=N overrides
        # it), gym.make_vec passes it to the batched env; passing it as a kwarg too would pin the
        # single env's own count to the registered value whatever gym.make was told.
        if env_id not in registry:  # importing twice (e.g. via "quadrat_env:...") must not warn
            register(id=env_id, entry_point=_entry(spec.env_class),
                     vector_entry_point=_entry(spec.vector_env_class),
                     kwargs=dict(kwargs), max_episode_steps=spec.max_episode_steps)  # fmt: skip
        if spec.jax_rules is not None:
            _register_jax(env_id, spec)


def jax_id(env_id: str) -> str:
    """``quadrat_env/Zudecken-v0`` -> ``quadrat_env_jax/Zudecken-v0``."""
    return f"{JAX_NAMESPACE}/{env_id.split('/')[-1]}"


def _register_jax(env_id: str, spec: GameSpec) -> None:
    twin = jax_id(env_id)
    _JAX_IDS[twin] = env_id
    if twin not in registry:  # string entry points: jax is imported when an env is made, not before
        register(id=twin, entry_point="quadrat_env.functional:make_env",
                 vector_entry_point="quadrat_env.functional:make_vector_env",
                 kwargs={"env_id": env_id}, max_episode_steps=spec.max_episode_steps,
                 disable_env_checker=True)  # fmt: skip


def unregister_game(spec: GameSpec) -> None:
    """Undo ``register_game`` (its IDs leave this registry and Gymnasium's): for a game
    registered for a while only, as a test registers its toy game."""
    for env_id in spec.every_id:
        if _GAMES.get(env_id) is spec:
            del _GAMES[env_id]
            registry.pop(env_id, None)
            if _JAX_IDS.pop(jax_id(env_id), None) is not None:
                registry.pop(jax_id(env_id), None)


def _entry(cls: type) -> str | type:
    """A string entry point where the class can be imported by name (Gymnasium's style)."""
    return cls if "<locals>" in cls.__qualname__ else f"{cls.__module__}:{cls.__qualname__}"


def env_ids(rungs: bool = True) -> tuple[str, ...]:
    """Every registered ID, in the order registered; with ``rungs=False`` without the games' extra
    rungs (``GameSpec.rungs``): the IDs of the benchmark's and the speed tables' rows."""
    return tuple(i for i, spec in _GAMES.items() if rungs or i not in spec.rungs)


def jax_env_ids(rungs: bool = True) -> tuple[str, ...]:
    """Every registered JAX env ID (``quadrat_env_jax/...``), in the order registered (``rungs``
    as in ``env_ids``)."""
    return tuple(j for j, i in _JAX_IDS.items() if rungs or i not in _GAMES[i].rungs)


def compiled_id(env_id: str) -> str:
    """The compiled env's ID of a JAX env ID (any other ID as it is)."""
    key = env_id.split(":", 1)[-1] if isinstance(env_id, str) else env_id
    return _JAX_IDS.get(key, env_id)


def spec_for(env_id: str) -> GameSpec:
    """The game behind ``env_id`` (``quadrat_env:`` module prefixes are allowed)."""
    key = env_id.split(":", 1)[-1] if isinstance(env_id, str) else env_id
    if key not in _GAMES:
        raise ValueError(f"{env_id!r} is not a registered patience; known IDs: {list(_GAMES)}")
    return _GAMES[key]


def rules_for(env_id: str, **kwargs: Any) -> Rules[Any]:
    """The rules of ``env_id`` (with its registered kwargs, updated by ``kwargs``), without an env:
    what ``gym.make(env_id, **kwargs).unwrapped.game`` holds. Env-only kwargs (``render_mode``,
    ``reward_mode``, ...) are not rule kwargs; unknown ones raise ``ValueError``."""
    spec = spec_for(env_id)
    key = env_id.split(":", 1)[-1]
    try:
        game = spec.rules(**{**spec.every_id[key], **kwargs})
    except TypeError as err:  # an unknown keyword
        raise ValueError(f"{env_id}: {err}") from None
    if not isinstance(game, Rules):
        raise TypeError(f"game {spec.name!r}: rules() returned {type(game).__name__}, not Rules")
    return game


def short_name(env_id: str) -> str:
    """``quadrat_env/Zudecken-v0`` -> ``Zudecken``."""
    return env_id.split("/")[-1].rsplit("-v", 1)[0]


def short_names() -> dict[str, str]:
    """Short name -> env ID, for command lines (``quadrat-play Zudecken``)."""
    return {short_name(i): i for i in _GAMES}


def resolve_id(name: str, allowed: tuple[str, ...] | None = None) -> str:
    """The env ID that ``name`` (an ID or its short name, ``Zudecken32``) means, among ``allowed``
    (default: every registered ID); ``ValueError`` listing the short names if none."""
    allowed = env_ids() if allowed is None else allowed
    names = {short_name(i): i for i in allowed}
    env_id = names.get(name, name)
    if env_id not in allowed:
        raise ValueError(f"unknown env {name!r}; choose an ID or one of {sorted(names)}")
    return env_id
