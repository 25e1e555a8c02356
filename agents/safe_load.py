"""Load an SB3 / sb3-contrib model file without running code from it.

A saved model is a zip whose ``data`` JSON holds some fields as pickles (``":serialized:"``): the
policy class, the spaces, the schedules, the policy kwargs. Unpickling runs whatever code the file
names, so **a model file is code**: loading one from someone else is running their program. SB3's
``custom_objects`` supplies a field instead of unpickling it. :func:`safe_custom_objects` supplies
every pickled field from trusted sources (the registered env's spaces, the algorithm's own classes,
the schedules' values and the policy kwargs read from the JSON's plain-text copies, with classes
from a short list of known ones) and refuses a file with any other pickled field. The weights are
loaded by SB3 with ``torch.load(weights_only=True)``, which runs no code.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import gymnasium as gym

#: Algorithms with a discrete-action policy that plays from ``predict(obs, ...)``: name -> (module, class).
ALGORITHMS = {
    "ppo": ("stable_baselines3", "PPO"),
    "a2c": ("stable_baselines3", "A2C"),
    "dqn": ("stable_baselines3", "DQN"),
    "maskable_ppo": ("sb3_contrib", "MaskablePPO"),
    "trpo": ("sb3_contrib", "TRPO"),
    "qrdqn": ("sb3_contrib", "QRDQN"),
}
ALGOS = tuple(ALGORITHMS)
_TRAINING_STATE = ("_last_obs", "_last_episode_starts", "_last_original_obs", "ep_info_buffer",
                   "ep_success_buffer", "action_noise", "rollout_buffer_kwargs")  # fmt: skip
_SCHEDULE = re.compile(r"^ConstantSchedule\(val=([0-9.eE+-]+)\)$")


class UnsafeModelFile(ValueError):
    """A model file asks to unpickle something quadrat_env cannot supply safely."""


def algorithm(algo: str) -> Any:
    """The SB3 / sb3-contrib class named ``algo`` (a key of :data:`ALGORITHMS`)."""
    if algo not in ALGORITHMS:
        raise ValueError(f"algo must be one of {list(ALGOS)}, got {algo!r}")
    module, name = ALGORITHMS[algo]
    return getattr(importlib.import_module(module), name)


def _known_classes() -> dict[str, Any]:
    import torch
    from quadrat_env.agents.features import EXTRACTORS

    # models saved before the agents moved under quadrat_env name the class by its old module
    known: dict[str, Any] = {f"<class '{module}.{cls.__name__}'>": cls for cls in EXTRACTORS.values()
                             for module in ("quadrat_env.agents.features", "agents.features")}  # fmt: skip
    for act in (torch.nn.ReLU, torch.nn.Tanh, torch.nn.ELU, torch.nn.LeakyReLU, torch.optim.Adam,
                torch.optim.RMSprop, torch.optim.AdamW, torch.optim.SGD):
        known[f"<class '{act.__module__}.{act.__qualname__}'>"] = act
    return known


def _net_arch(value: Any) -> Any:
    if isinstance(value, str):
        value = ast.literal_eval(value)  # literals only: no code
    ok_list = isinstance(value, list) and all(isinstance(v, int) and v > 0 for v in value)
    ok_dict = isinstance(value, dict) and set(value) <= {"pi", "vf"} and all(map(_net_arch, value.values()))
    if not (ok_list or ok_dict):
        raise UnsafeModelFile(f"policy_kwargs net_arch {value!r} is not a list of layer sizes")
    return value


def _plain(value: Any) -> bool:
    """A dict of names to numbers or booleans (optimizer settings), nothing callable."""
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, (int, float, bool))
                                           for k, v in value.items())  # fmt: skip


def _plain_setting(key: str, value: Any) -> bool:
    """Policy settings that are plain values (no class, nothing callable)."""
    if key == "optimizer_kwargs":
        return _plain(value)
    if key == "n_quantiles":
        return isinstance(value, int) and not isinstance(value, bool)
    return key in ("ortho_init", "share_features_extractor", "normalize_images") and value in (True, False)


def _policy_kwargs(field: dict[str, Any]) -> dict[str, Any]:
    known, out = _known_classes(), {}
    for key, value in field.items():
        if key in (":type:", ":serialized:"):
            continue
        if key == "net_arch":
            out[key] = _net_arch(value)
        elif key in ("features_extractor_class", "activation_fn", "optimizer_class") and value in known:
            out[key] = known[value]
        elif _plain_setting(key, value):
            out[key] = value
        else:
            raise UnsafeModelFile(f"policy_kwargs[{key!r}] = {str(value)[:80]!r} is not one quadrat_env can "
                                  "supply without unpickling")  # fmt: skip
    return out


def safe_custom_objects(path: str | Path, algo: str, env_id: str) -> dict[str, Any]:
    """``custom_objects`` for ``load(path)`` that leave nothing in the file to unpickle."""
    from stable_baselines3.common.utils import FloatSchedule

    cls = algorithm(algo)
    try:
        with zipfile.ZipFile(path) as archive:
            data = json.loads(archive.read("data"))
    except (OSError, KeyError, zipfile.BadZipFile, json.JSONDecodeError) as err:
        raise ValueError(f"{path} is not a saved SB3 model ({err})") from None
    env = gym.make(env_id)
    custom: dict[str, Any] = {}
    for key, field in data.items():
        if not (isinstance(field, dict) and ":serialized:" in field):
            continue
        if key == "policy_class":
            custom[key] = cls.policy_aliases["MlpPolicy"]
        elif key in ("observation_space", "action_space"):
            custom[key] = _space(env, key, field)
            _check_space(path, key, field, custom[key], env_id)
        elif key in ("rollout_buffer_class", "replay_buffer_class"):
            custom[key] = None  # the algorithm picks its own
        elif key in ("clip_range", "lr_schedule", "clip_range_vf", "exploration_schedule"):
            found = _SCHEDULE.match(str(field.get("value_schedule", "")))
            custom[key] = FloatSchedule(float(found.group(1)) if found else 0.0)
        elif key == "train_freq":
            custom[key] = (1, "step")  # off-policy training cadence: unused in play
        elif key == "policy_kwargs":
            custom[key] = _policy_kwargs(field)
        elif key in _TRAINING_STATE:
            custom[key] = None
        else:
            raise UnsafeModelFile(f"{path}: the field {key!r} is a pickle quadrat_env cannot supply; "
                                  "unpickling it would run code from the file. Load it with trust=True only "
                                  "if you trust whoever made it")  # fmt: skip
    return custom


def _space(env: gym.Env, key: str, field: dict[str, Any]) -> Any:
    """The env's space; for a model that observes the mask too (``observe_mask``), that layout."""
    from quadrat_env.wrappers import mask_observation_space, sees_mask

    space, shape = getattr(env, key), field.get("_shape")
    if key == "observation_space" and shape is not None and sees_mask(shape, env):
        return mask_observation_space(space, int(env.action_space.n))  # type: ignore[attr-defined]
    return space


def _check_space(path: Any, key: str, field: dict[str, Any], space: Any, env_id: str) -> None:
    """The file's space, as its plain-text copy states it, must be the env's."""
    shape = field.get("_shape")
    if shape is not None and tuple(shape) != tuple(space.shape):
        raise ValueError(f"{path} was trained on an {key.replace('_', ' ')} of shape {tuple(shape)}; "
                         f"{env_id} has {tuple(space.shape)}: a model for another env")  # fmt: skip
    if key == "action_space" and "n" in field and int(field["n"]) != int(space.n):
        raise ValueError(f"{path} has {field['n']} actions; {env_id} has {space.n}: a model for another env")


def load_model(path: str | Path, algo: str, env_id: str, trust: bool = False) -> Any:
    """Load a model of one of :data:`ALGORITHMS` for ``env_id`` on CPU; with ``trust=False`` (the default)
    nothing in the file is unpickled (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no saved model at {path}")
    cls = algorithm(algo)
    custom = None if trust else safe_custom_objects(path, algo, env_id)
    return cls.load(path, device="cpu", custom_objects=custom)
