"""Gymnasium environments for small patience card games: Quadrat, Zudecken and Quadrille.

``import quadrat_env`` registers the environment IDs; ``gym.make("quadrat_env:quadrat_env/...")``
works without importing first.
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

__version__ = "0.1.0"

#: Registered IDs -> (entry point, default kwargs, max_episode_steps).
ENV_SPECS: dict[str, tuple[str, dict[str, object], int]] = {
    "quadrat_env/Quadrat-v0": ("quadrat_env.envs.quadrat:QuadratEnv", {"n_cards": 32}, 200),
    "quadrat_env/Quadrat52-v0": ("quadrat_env.envs.quadrat:QuadratEnv", {"n_cards": 52}, 200),
    "quadrat_env/Zudecken-v0": ("quadrat_env.envs.zudecken:ZudeckenEnv", {}, 200),
    "quadrat_env/Quadrille-v0": ("quadrat_env.envs.quadrille:QuadrilleEnv", {}, 1000),
}
ENV_IDS: tuple[str, ...] = tuple(ENV_SPECS)

for _env_id, (_entry, _kwargs, _steps) in ENV_SPECS.items():
    if _env_id not in registry:  # importing twice (e.g. via "quadrat_env:...") must not warn
        register(id=_env_id, entry_point=_entry, kwargs=_kwargs, max_episode_steps=_steps)
