"""Gymnasium environments for small patience card games: Quadrat, Zudecken and Quadrille.

``import quadrat_env`` registers the environment IDs; ``gym.make("quadrat_env:quadrat_env/...")``
works without importing first. Each game is one folder under ``quadrat_env/games/``, reached
through the registry (``quadrat_env.registry``); new games join with ``register_game``.
"""

from __future__ import annotations

from quadrat_env import games  # noqa: F401  (registers the built-in games)
from quadrat_env.core.rules import IllegalMove
from quadrat_env.registry import GameSpec, env_ids, register_game, spec_for

__version__ = "0.2.0"

#: The built-in IDs (games registered later are in ``env_ids``), the Zudecken ladder's rungs among them.
ENV_IDS: tuple[str, ...] = env_ids()
#: Each built-in game's own IDs, without the ladder's other rungs (``Zudecken16-v0``, ...): the rows
#: of the benchmark and of the speed tables.
MAIN_IDS: tuple[str, ...] = env_ids(rungs=False)

__all__ = ["ENV_IDS", "MAIN_IDS", "GameSpec", "IllegalMove", "env_ids", "register_game", "spec_for"]
