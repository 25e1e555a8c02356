"""Policy networks by name: the features extractors configs name, and the afterstate networks.

A config names its features extractor (``features: zudecken``); nothing is imported by name from a
config file: the names are the ones studies register (``quadrat_env.agents.registry``). An
*afterstate network* scores each move by the table it leaves (``scored_moves(obs)``: which moves it
scores; ``afterstates(obs, rows, moves)``; ``value(afterstates)``: logits; ``forward(obs)``: every
move's score). Its scores are the policy's logits: ``net_arch=[]`` and ``scores_as_logits``.

An afterstate network may have a JAX twin (``jax_afterstate_network``), for learners whose env and
learner run in one jitted loop: a class built from the observation's size with ``afterstate_shape``,
``num_moves``, ``sizes(**kwargs)`` (its size, checked), ``init(key, **sizes)`` (weights: a dict
named and shaped as the torch network's ``state_dict``, so they load into it as they are),
``afterstates(obs)`` (one observation: every move's afterstate and whether it is scored),
``value(params, afterstates)`` and ``scores(params, afterstates, scored)`` (every action's score).
"""

from __future__ import annotations

from typing import Any

from quadrat_env.agents import registry

#: The name for the plain observation (no features extractor).
NONE = "none"
AFTERSTATE_API = ("scored_moves", "afterstates", "value")


def names() -> tuple[str, ...]:
    """Every features name a config may give."""
    return (*registry.network_names(), NONE)


def extractor(name: str) -> type:
    """The features extractor class a config's name stands for (``ValueError`` if unknown)."""
    found = registry.networks().get(name)
    if found is None:
        raise ValueError(f"features must be one of {list(names())}, got {name!r}")
    return found


def scores_afterstates(network: Any) -> bool:
    """Whether a features extractor (class or instance) is an afterstate network."""
    return network is not None and all(hasattr(network, attr) for attr in AFTERSTATE_API)


def afterstate_names() -> list[str]:
    return [name for name, cls in registry.networks().items() if scores_afterstates(cls)]


def policy_kwargs_with(features: str | None, policy_kwargs: dict | None) -> dict:
    """``policy_kwargs`` plus the features extractor a config names (``None`` or "none": the plain
    observation)."""
    kwargs = dict(policy_kwargs or {})
    if features in (None, NONE):
        return kwargs
    kwargs["features_extractor_class"] = cls = extractor(features)
    if scores_afterstates(cls):  # keep its layers' own initialisation (SB3's is for MLPs)
        kwargs.setdefault("ortho_init", False)
    return kwargs


#: An afterstate policy's default layers for actor-critic training: its scores are the logits (no
#: actor layer); the critic reads the same scores through two hidden layers, so the value is not
#: linear in them.
AFTERSTATE_NET_ARCH = {"pi": [], "vf": [64, 64]}


def actor_critic_kwargs(features: str | None, policy_kwargs: dict | None) -> dict:
    """``policy_kwargs_with``, and for an afterstate network (whose scores are the logits) an
    actor with no layer of its own: ``net_arch`` {pi: [], vf: [...]} (default
    ``AFTERSTATE_NET_ARCH``; any other is refused)."""
    kwargs = policy_kwargs_with(features, policy_kwargs)
    if features in (None, NONE) or not scores_afterstates(extractor(features)):
        return kwargs
    arch = kwargs.setdefault("net_arch", AFTERSTATE_NET_ARCH)
    if not (isinstance(arch, dict) and arch.get("pi") == []):
        raise ValueError(f"features {features!r} scores every move itself: its policy needs "
                         f"net_arch {{pi: [], vf: [...]}}, got {arch!r}")  # fmt: skip
    return kwargs


def pass_scores_through(policy: Any, fresh: bool) -> None:
    """For an afterstate network's policy: the action head passes the scores through as the logits
    (set on a ``fresh`` policy, kept from a loaded one) and is never trained. Other policies: nothing."""
    if scores_afterstates(policy.features_extractor):
        if fresh:
            scores_as_logits(policy)
        policy.action_net.requires_grad_(False)


def scores_as_logits(policy: Any) -> None:
    """For a policy whose features are an afterstate network's move scores (``net_arch=[]``):
    the action net passes them through as the logits (identity, not trained)."""
    import torch

    if not scores_afterstates(policy.features_extractor):
        raise ValueError("scores_as_logits needs a policy whose features extractor scores afterstates")
    with torch.no_grad():
        policy.action_net.weight.copy_(torch.eye(policy.action_net.out_features))
        policy.action_net.bias.zero_()
    policy.action_net.requires_grad_(False)


def afterstate_model(env_id: str, seed: int, features: str, features_kwargs: dict | None = None,
                     env_kwargs: dict | None = None) -> Any:  # fmt: skip
    """A new MaskablePPO model for ``env_id`` whose logits are the scores of the afterstate network
    ``features`` names (``net_arch=[]``, ``scores_as_logits``), its weights drawn from ``seed``."""
    import gymnasium as gym
    import torch
    from sb3_contrib import MaskablePPO

    if not scores_afterstates(extractor(features)):
        raise ValueError(f"features {features!r} is not an afterstate network: choose one of "
                         f"{afterstate_names()}")  # fmt: skip
    torch.manual_seed(seed)
    kwargs = policy_kwargs_with(features, {"net_arch": []})
    if features_kwargs:
        kwargs["features_extractor_kwargs"] = dict(features_kwargs)
    model = MaskablePPO("MlpPolicy", gym.make(env_id, **(env_kwargs or {})), seed=seed, device="cpu",
                        policy_kwargs=kwargs)  # fmt: skip
    scores_as_logits(model.policy)
    return model


def kwarg_limits() -> dict[str, int]:
    """The largest value of each network keyword argument any registered network takes."""
    out: dict[str, int] = {}
    for cls in registry.networks().values():
        for key, limit in getattr(cls, "kwarg_limits", {}).items():
            out[key] = max(out.get(key, 0), limit)
    return out


def jax_afterstate_network(name: str, obs_size: int) -> Any:
    """The JAX twin of the afterstate network ``name``, for observations of ``obs_size`` entries."""
    found = registry.jax_networks().get(name)
    if found is None:
        raise ValueError(f"features {name!r} has no JAX afterstate network: choose one of "
                         f"{sorted(registry.jax_networks())}")  # fmt: skip
    return registry.resolve(found)(obs_size)
