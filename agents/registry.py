"""Agents and networks by name: the one place that picks a game's own agents (as pgx's ``make``).

    from quadrat_env import agents
    agents.make("greedy", "quadrat_env/Zudecken-v0")
    agents.available("optimal", "quadrat_env/Zudecken-v0")   # False: no exact policy for 52 cards

The generic agents are built in. A study of one game (a subpackage of ``agents/``, such as
``agents/zudecken/``) adds its own agents and networks when it is imported, naming each by
``"module:attribute"`` so that nothing heavy is imported until it is made. The studies are found by
walking ``agents/``'s subpackages, so no code outside a study names it or its game.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import pkgutil
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: A callable, or where to find one: ``"package.module:attribute"``.
Target = Callable[..., Any] | str


@dataclass(frozen=True)
class AgentEntry:
    factory: Target  # factory(env_id, **kwargs) -> agent
    available: Target | None  # available(env_id) -> bool; None: every env
    help: str


_AGENTS: dict[str, AgentEntry] = {}
_NETWORKS: dict[str, str] = {}  # features name -> "module:Class"
_JAX_NETWORKS: dict[str, str] = {}  # features name -> "module:Class" of its JAX twin (same weights)
_OLD_PATHS: dict[str, str] = {}  # "old.module.Class" a saved model may record -> features name
_MOVED: dict[str, str] = {}  # old module -> the module it moved to (importable under both names)
_found = False


def register_agent(name: str, factory: Target, available: Target | None = None, help: str = "") -> None:  # noqa: A002
    """Make ``make(name, env_id)`` build ``factory(env_id, **kwargs)`` where ``available(env_id)``."""
    if name in _AGENTS and _AGENTS[name].factory != factory:
        raise ValueError(f"an agent named {name!r} is registered already")
    _AGENTS[name] = AgentEntry(factory, available, help)


def register_network(name: str, cls: str, old_modules: tuple[str, ...] = (), jax: str | None = None) -> None:
    """A features extractor configs may name (``features: name``); ``old_modules``: modules it lived
    in before, which model files saved then record (the safe loader maps them to it); ``jax``: its
    JAX twin, whose weights load into it as they are (``quadrat_env.agents.networks``)."""
    _NETWORKS[name] = cls
    if jax is not None:
        _JAX_NETWORKS[name] = jax
    for module in old_modules:
        _OLD_PATHS[f"{module}.{cls.rpartition(':')[2]}"] = name
        _MOVED[module] = cls.partition(":")[0]


def _resolve(target: Target) -> Callable[..., Any]:
    if callable(target):
        return target
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def _discover() -> None:
    """Import every study folder under agents/ once (each registers what it adds)."""
    global _found
    if _found:
        return
    _found = True
    package = importlib.import_module("quadrat_env.agents")
    for info in pkgutil.iter_modules(package.__path__):
        if info.ispkg:
            importlib.import_module(f"quadrat_env.agents.{info.name}")


def names() -> tuple[str, ...]:
    """Every agent ``make`` knows, built in first."""
    _discover()
    return tuple(_AGENTS)


def available(name: str, env_id: str) -> bool:
    """Whether ``make(name, env_id)`` can build the agent (``ValueError`` for an unknown name)."""
    entry = _entry(name)
    return entry.available is None or bool(_resolve(entry.available)(env_id))


def make(name: str, env_id: str, **kwargs: Any) -> Any:
    """The agent ``name`` for ``env_id`` (``ValueError`` if unknown or not available for the env)."""
    entry = _entry(name)
    if not available(name, env_id):
        raise ValueError(f"the {name} agent is not available for {env_id} ({entry.help})")
    return _resolve(entry.factory)(env_id, **kwargs)


def describe(name: str) -> str:
    return _entry(name).help


def _entry(name: str) -> AgentEntry:
    _discover()
    if name not in _AGENTS:
        raise ValueError(f"no agent named {name!r}; known: {list(_AGENTS)}")
    return _AGENTS[name]


def networks() -> dict[str, type]:
    """Every features extractor by its config name (imports them: needs the train extra)."""
    _discover()
    return {name: _resolve(cls) for name, cls in _NETWORKS.items()}


def jax_networks() -> dict[str, str]:
    """The networks with a JAX twin: name -> "module:Class" (not imported: that needs jax)."""
    _discover()
    return dict(_JAX_NETWORKS)


def resolve(target: str) -> Any:
    """The object a "module:attribute" path names."""
    return _resolve(target)


def network_names() -> tuple[str, ...]:
    _discover()
    return tuple(_NETWORKS)


def network_paths() -> dict[str, type]:
    """Each network under every class path a saved model may record for it: its module's, the old ones'."""
    classes = networks()
    out = {f"{cls.__module__}.{cls.__name__}": cls for cls in classes.values()}
    out.update({path: classes[name] for path, name in _OLD_PATHS.items()})
    return out


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Modules that moved stay importable under their old name (consulted after every other finder),
    so that a model file whose pickles name ``quadrat_env.agents.features.ZudeckenAfterstates`` still
    loads with SB3's own ``load``: the old name is a module holding the new module's names."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name.startswith("quadrat_env.agents.") and name not in _MOVED:
            _discover()
        if name not in _MOVED:
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec: Any) -> types.ModuleType:
        return types.ModuleType(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        new = importlib.import_module(_MOVED[module.__name__])
        module.__dict__.update({k: v for k, v in vars(new).items() if not k.startswith("__")})


if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
    sys.meta_path.append(_MovedModules())


def _random(env_id: str, seed: int = 0) -> Any:
    from quadrat_env.agents.random_agent import RandomAgent

    return RandomAgent(seed=seed)


def _planner(env_id: str, seed: int = 0, time_budget: float = float("inf"), **kwargs: Any) -> Any:
    """The planner the tools name (benchmark, ``quadrat-bench``): without a time budget, so a run plays
    the same moves on any machine at any load (``samples`` bounds each decision)."""
    from quadrat_env.agents.planner import PlannerAgent

    return PlannerAgent(env_id, seed=seed, time_budget=time_budget, **kwargs)


register_agent("random", _random, help="uniform over the legal moves")
register_agent("greedy", "quadrat_env.agents.greedy:GreedyAgent", help="each game's greedy rule")
register_agent("hand", "quadrat_env.agents.hand:HandRuleAgent", help="keeps the upcards unseen cards match")
register_agent("planner", _planner, help="samples the unseen cards and searches each sample")
