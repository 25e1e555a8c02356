"""Gymnasium environments for small patience card games: Quadrat, Zudecken and Quadrille.

``import quadrat_env`` registers the environment IDs; ``gym.make("quadrat_env:quadrat_env/...")``
works without importing first. Each game is one folder under ``quadrat_env/games/``, reached
through the registry (``quadrat_env.registry``); new games join with ``register_game``.
"""

from __future__ import annotations

#: The package's own commands (console scripts): a Ctrl-C while one of them imports the package is
#: one line and exit status 130, as it is once the command runs; anywhere else it goes on as usual.
COMMANDS = ("quadrat", "quadrat-play", "quadrat-bench")

try:
    from quadrat_env import games  # noqa: F401  (registers the built-in games)
    from quadrat_env.core.rules import IllegalMove
    from quadrat_env.registry import GameSpec, env_ids, register_game, spec_for
except KeyboardInterrupt:
    import os as _os
    import sys as _sys

    if (_name := _os.path.basename(_sys.argv[0]) if _sys.argv else "") not in COMMANDS:
        raise
    print(f"{_name}: stopped while starting (Ctrl-C); nothing was done", file=_sys.stderr)
    raise SystemExit(130) from None

__version__ = "0.2.0"

#: The built-in IDs (games registered later are in ``env_ids``), the Zudecken ladder's rungs among them.
ENV_IDS: tuple[str, ...] = env_ids()
#: Each built-in game's own IDs, without the ladder's other rungs (``Zudecken16-v0``, ...): the rows
#: of the benchmark and of the speed tables.
MAIN_IDS: tuple[str, ...] = env_ids(rungs=False)

__all__ = ["ENV_IDS", "MAIN_IDS", "GameSpec", "IllegalMove", "env_ids", "register_game", "spec_for"]
