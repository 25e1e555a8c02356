"""rl-baselines3-zoo with action masks: ``python -m quadrat_env.zoo train|enjoy|record_video [zoo args]``.

rl-zoo3 (2.9) knows no MaskablePPO, and its evaluation callback, ``enjoy`` and ``record_video`` call
``model.predict`` without masks. This runs the zoo's own commands after teaching it:

- ``--algo ppo_mask``: sb3-contrib's MaskablePPO;
- evaluation during training passes masks (sb3-contrib's ``MaskableEvalCallback``) for ppo_mask;
- ``enjoy`` and ``record_video`` pass the test env's masks to a ppo_mask model's ``predict``;
- the project's IDs are registered (no ``--gym-packages`` needed, which ``record_video`` lacks);
- ``train`` without ``--conf-file`` uses the YAML this project ships for the algorithm (entries for
  the native batched env train with 8 envs: the zoo writes one Monitor file per env);
- evaluations report the win rate ("Success rate"; ``successes`` in ``evaluations.npz``), over 200
  episodes unless ``--eval-episodes`` says otherwise.

    python -m quadrat_env.zoo train --algo ppo_mask --env quadrat_env/Zudecken-v0
    python -m quadrat_env.zoo enjoy --algo ppo_mask --env quadrat_env/Zudecken-v0 -f logs/ --no-render

Models that rl-zoo3 loads are unpickled as the zoo always does: load only files you trust.
"""

from __future__ import annotations

import runpy
import sys
from importlib import resources
from typing import Any

import quadrat_env  # noqa: F401  (registers the IDs)

ALGO = "ppo_mask"
COMMANDS = {"train": "rl_zoo3.train", "enjoy": "rl_zoo3.enjoy", "record_video": "rl_zoo3.record_video"}
#: The YAML this project ships per zoo algorithm (keyed by env ID, as the zoo reads it).
CONFIGS = {ALGO: "maskable_ppo.yml", "ppo": "ppo.yml"}
USAGE = "usage: python -m quadrat_env.zoo {train,enjoy,record_video} [rl-zoo3 arguments]"


#: Keys of the project's YAML that the zoo has no use for (it picks its own VecEnv: ``--vec-env``).
PROJECT_KEYS = ("vec_env",)
#: The zoo runs one Monitor-wrapped env per ``n_envs`` in SB3's DummyVecEnv (one log file each), not
#: the native batched env the project's YAML asks for with its 1,024 envs: those entries train here
#: with 8 envs and rollouts of the same order (8 x 256 steps, batch 512).
ZOO_ROLLOUT = {"n_envs": 8, "n_steps": 256, "batch_size": 512}
#: Evaluation episodes when ``train`` is not told (the zoo's default, 5, says nothing about a win rate).
EVAL_EPISODES = 200


def shipped_config(algo: str) -> str | None:
    """The project's hyperparameters for a zoo algorithm name, as a YAML file the zoo reads (keyed
    by env ID, without the project-only keys), or None if the project ships none for it."""
    import tempfile

    import yaml

    name = CONFIGS.get(algo)
    if name is None:
        return None
    table = yaml.safe_load((resources.files("quadrat_env.experiments") / "hyperparams" / name).read_text())
    zoo = {env_id: zoo_entry(entry) for env_id, entry in table.items() if env_id != "default"}
    with tempfile.NamedTemporaryFile("w", suffix=f"-{name}", delete=False) as f:
        yaml.safe_dump(zoo, f, sort_keys=False)
    return f.name


def zoo_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """One env's hyperparameters as the zoo takes them: ``observe_mask`` (plain PPO) becomes the
    single-env wrapper that appends the mask, since the zoo builds its own VecEnv."""
    out = {k: v for k, v in entry.items() if k not in (*PROJECT_KEYS, "observe_mask")}
    if entry.get("vec_env") == "native":
        out.update(ZOO_ROLLOUT)
    if entry.get("observe_mask"):
        out["env_wrapper"] = "quadrat_env.wrappers.MaskInObservation"
    return out


def install() -> None:
    """Teach the imported rl-zoo3 ``ppo_mask`` and masked evaluation (idempotent)."""
    try:
        import rl_zoo3
        import rl_zoo3.exp_manager
        import rl_zoo3.utils
        from sb3_contrib import MaskablePPO
        from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
        from sb3_contrib.common.maskable.utils import get_action_masks
    except ImportError as err:
        raise ImportError(f"quadrat_env.zoo needs rl-zoo3 and sb3-contrib ({err.name} is missing): "
                          "pip install 'quadrat-env[frameworks]'") from err  # fmt: skip

    class ZooMaskablePPO(MaskablePPO):
        """MaskablePPO whose ``predict`` asks the zoo's test env for masks when none are passed."""

        mask_env: Any = None  # set when enjoy/record_video create their env

        def predict(self, observation, state=None, episode_start=None, deterministic=False,
                    action_masks=None):  # fmt: skip
            if action_masks is None and ZooMaskablePPO.mask_env is not None:
                action_masks = get_action_masks(ZooMaskablePPO.mask_env)
            return super().predict(observation, state, episode_start, deterministic, action_masks)

    class EvalCallback(MaskableEvalCallback):
        """The zoo's evaluation callback, with masks for a MaskablePPO model and without for others."""

        def _init_callback(self) -> None:
            super()._init_callback()
            self.use_masking = isinstance(self.model, MaskablePPO)

        def _log_success_callback(self, locals_: dict[str, Any], globals_: dict[str, Any]) -> None:
            # a won deal is a success: the zoo prints and logs the win rate of every evaluation
            if locals_["done"]:
                self._is_success_buffer.append(bool(locals_["info"].get("won", False)))

    def remembering(create: Any) -> Any:
        def create_test_env(*args: Any, **kwargs: Any) -> Any:
            ZooMaskablePPO.mask_env = create(*args, **kwargs)
            return ZooMaskablePPO.mask_env

        return create_test_env

    if ALGO in rl_zoo3.utils.ALGOS:
        return
    rl_zoo3.utils.ALGOS[ALGO] = ZooMaskablePPO
    rl_zoo3.exp_manager.EvalCallback = EvalCallback
    # the commands run as fresh __main__ modules (runpy), so they import the patched names
    rl_zoo3.utils.create_test_env = rl_zoo3.create_test_env = remembering(rl_zoo3.utils.create_test_env)


def _algo(args: list[str]) -> str:
    for i, arg in enumerate(args):
        if arg == "--algo" and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--algo="):
            return arg.split("=", 1)[1]
    return "ppo"


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["--help"], ["-h"]):
        print(f"{USAGE}\n(then each command's own --help: python -m quadrat_env.zoo train --help)")
        raise SystemExit(0)
    if not args or args[0] not in COMMANDS:
        print(f"{USAGE}\nerror: the first argument must be one of {sorted(COMMANDS)}", file=sys.stderr)
        raise SystemExit(2)
    command, rest = args[0], args[1:]
    try:
        install()
    except ImportError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    if command == "train" and not any(a.startswith(("--conf-file", "-conf")) for a in rest):
        config = shipped_config(_algo(rest))
        rest += ["--conf-file", config] if config else []
    if command == "train" and not any(a.startswith("--eval-episodes") for a in rest):
        rest += ["--eval-episodes", str(EVAL_EPISODES)]
    sys.argv = [f"quadrat_env.zoo {command}", *rest]
    # record_video has no main function: every command runs as the zoo's own ``python -m``
    runpy.run_module(COMMANDS[command], run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
