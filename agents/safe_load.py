"""Load an SB3 / sb3-contrib model file without running code from it.

A saved model is a zip whose ``data`` JSON holds some fields as pickles (``":serialized:"``): the
policy class, the spaces, the schedules, the policy kwargs. Unpickling runs whatever code the file
names, so **a model file is code**: loading one from someone else is running their program. SB3's
``custom_objects`` supplies a field instead of unpickling it. ``safe_custom_objects`` supplies
every pickled field from trusted sources (the registered env's spaces, the algorithm's own classes,
the schedules' values and the policy kwargs read from the JSON's plain-text copies, with classes
from a short list of known ones) and refuses a file with any other pickled field. The weights are
loaded by SB3 with ``torch.load(weights_only=True)``, which runs no code.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import io
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
#: What a model file may cost before anything in it is believed (a 2 MB file can hold gigabytes):
#: decompressed bytes of ``data`` and of any member, and of all members; members in all.
MAX_DATA, MAX_MEMBER, MAX_TOTAL, MAX_MEMBERS = 16 << 20, 64 << 20, 160 << 20, 32
#: Network sizes: units in a layer, layers, and weights between two consecutive layers.
MAX_UNITS, MAX_LAYERS, MAX_LAYER_WEIGHTS = 8192, 16, 1 << 22
#: Plain settings that size what loading allocates (rollout and replay buffers), with their bounds.
_SIZES = {"n_steps": 1 << 20, "n_envs": 1 << 16, "batch_size": 1 << 20, "buffer_size": 1 << 21,
          "n_epochs": 1 << 16}  # fmt: skip
_ROLLOUT = 1 << 22  # n_steps * n_envs


class UnsafeModelFile(ValueError):
    """A model file asks to unpickle something quadrat_env cannot supply safely."""


def algorithm(algo: str) -> Any:
    """The SB3 / sb3-contrib class named ``algo`` (a key of ``ALGORITHMS``)."""
    if algo not in ALGORITHMS:
        raise ValueError(f"algo must be one of {list(ALGOS)}, got {algo!r}")
    module, name = ALGORITHMS[algo]
    return getattr(importlib.import_module(module), name)


def _known_classes() -> dict[str, Any]:
    import torch
    from quadrat_env.agents.registry import network_paths

    # models saved before a network moved name its class by its old module: those paths are mapped too
    known: dict[str, Any] = {f"<class '{path}'>": cls for path, cls in network_paths().items()}
    for act in (
        torch.nn.ReLU,
        torch.nn.Tanh,
        torch.nn.ELU,
        torch.nn.LeakyReLU,
        torch.optim.Adam,
        torch.optim.RMSprop,
        torch.optim.AdamW,
        torch.optim.SGD,
    ):
        known[f"<class '{act.__module__}.{act.__qualname__}'>"] = act
    return known


def _net_arch(value: Any) -> Any:
    if isinstance(value, str) and len(value) < 1000:
        with contextlib.suppress(ValueError, SyntaxError):
            value = ast.literal_eval(value)  # literals only: no code
    if isinstance(value, dict) and value and set(value) <= {"pi", "vf"}:  # SB3's separate actor and critic
        for layers in value.values():
            _layers(layers, value)
    else:
        _layers(value, value)
    return value


def _layers(layers: Any, whole: Any) -> None:
    """One list of layer sizes (an empty one included: no hidden layer), within the bounds."""
    if not (isinstance(layers, list) and all(type(v) is int and 0 < v <= MAX_UNITS for v in layers)):
        raise UnsafeModelFile(f"policy_kwargs net_arch {str(whole)[:80]!r} is not a list of layer sizes "
                              f"(1..{MAX_UNITS} units each), or a dict of such lists under 'pi' and "
                              "'vf'")  # fmt: skip
    pairs = zip(layers[:-1], layers[1:], strict=True)
    if len(layers) > MAX_LAYERS or any(a * b > MAX_LAYER_WEIGHTS for a, b in pairs):
        raise UnsafeModelFile(f"policy_kwargs net_arch {whole!r} is larger than quadrat_env loads (at most "
                              f"{MAX_LAYERS} layers, {MAX_LAYER_WEIGHTS:,} weights between two)")  # fmt: skip


def _read_members(path: Path, raw: bytes | None = None) -> dict[str, Any]:
    """The file's ``data`` JSON, after checking every member's real decompressed size (read in
    chunks, never trusting the sizes the zip states) against the limits above; from ``raw``, the
    file's bytes as read once, where given."""
    try:
        with zipfile.ZipFile(path if raw is None else io.BytesIO(raw)) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_MEMBERS:
                raise UnsafeModelFile(f"{path} holds {len(infos)} files; a saved model has a handful")
            total, data = 0, b""
            for info in infos:
                limit = min(MAX_DATA if info.filename == "data" else MAX_MEMBER, MAX_TOTAL - total)
                size, head = 0, []
                with archive.open(info) as member:
                    while chunk := member.read(1 << 20):
                        size += len(chunk)
                        if size > limit:
                            raise UnsafeModelFile(f"{path}: {info.filename!r} unpacks to over {limit >> 20} "
                                                  "MB; a model for these games is far smaller")  # fmt: skip
                        if info.filename == "data":
                            head.append(chunk)
                total += size
                data = b"".join(head) if info.filename == "data" else data
            return json.loads(data)
    except (OSError, KeyError, zipfile.BadZipFile, json.JSONDecodeError, UnicodeDecodeError, EOFError,
            RuntimeError, NotImplementedError, RecursionError) as err:  # fmt: skip
        # RuntimeError: an encrypted member; NotImplementedError: an unknown compression;
        # RecursionError: JSON nested deeper than Python parses
        why = str(err).splitlines()[0][:200] if str(err) else type(err).__name__
        raise ValueError(f"{path} is not a saved SB3 model ({why})") from None


def algo_of(path: str | Path) -> str:
    """The algorithm a saved model was trained with, read from its plain JSON (nothing unpickled):
    the policy class's module, then the settings only one algorithm has."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"no saved model at {path}")
    data = _read_members(Path(path))
    policy = data.get("policy_class") if isinstance(data, dict) else None
    module = str(policy.get("__module__", "")) if isinstance(policy, dict) else ""
    if module.startswith("sb3_contrib.common.maskable"):
        return "maskable_ppo"
    for algo in ("qrdqn", "dqn"):
        if f".{algo}." in f".{module}.":
            return algo
    for key, algo in (("cg_max_steps", "trpo"), ("clip_range", "ppo"), ("normalize_advantage", "a2c")):
        if isinstance(data, dict) and key in data:
            return algo
    raise ValueError(f"cannot tell which algorithm made {path}; name it (one of {', '.join(ALGOS)})")


def _check_sizes(path: Path, data: dict[str, Any]) -> None:
    """Plain settings that size what SB3 allocates on load: whole numbers within bounds."""
    for key, bound in _SIZES.items():
        value = data.get(key)
        if value is not None and not (type(value) is int and 0 < value <= bound):
            raise UnsafeModelFile(f"{path}: {key} = {str(value)[:40]} is not a whole number in 1..{bound:,}")
    if int(data.get("n_steps") or 1) * int(data.get("n_envs") or 1) > _ROLLOUT:
        raise UnsafeModelFile(f"{path}: n_steps x n_envs is over {_ROLLOUT:,} (a rollout buffer too large)")


def _plain(value: Any) -> bool:
    """A dict of names to numbers or booleans (optimizer settings), nothing callable."""
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, (int, float, bool))
                                           for k, v in value.items())  # fmt: skip


def _plain_setting(key: str, value: Any) -> bool:
    """Policy settings that are plain values (no class, nothing callable)."""
    if key == "optimizer_kwargs":
        return _plain(value)
    if key == "features_extractor_kwargs":  # a network's sizes, each within its bound
        from quadrat_env.agents.networks import kwarg_limits

        limits = kwarg_limits()
        return isinstance(value, dict) and all(
            k in limits and type(v) is int and 0 < v <= limits[k] for k, v in value.items()
        )
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


def safe_custom_objects(path: str | Path, algo: str, env_id: str, raw: bytes | None = None) -> dict[str, Any]:
    """``custom_objects`` for ``load(path)`` that leave nothing in the file to unpickle. A file whose
    fields have shapes no saved model has (a number where a list belongs, ...) is a ``ValueError``.
    ``raw``: the file's bytes, read once by the caller, which then loads these same bytes."""
    cls = algorithm(algo)
    data = _read_members(Path(path), raw)
    try:
        return _custom_objects(Path(path), cls, data, env_id)
    except UnsafeModelFile as err:  # every refusal names the file
        if str(path) in str(err):
            raise
        raise UnsafeModelFile(f"{path}: {err}") from None
    except (TypeError, AttributeError, IndexError, RecursionError) as err:
        raise ValueError(
            f"{path} is not a saved SB3 model quadrat_env can read: a field is malformed "
            f"({type(err).__name__}: {str(err)[:120]})"
        ) from None


def _custom_objects(path: Path, cls: Any, data: Any, env_id: str) -> dict[str, Any]:
    from stable_baselines3.common.utils import FloatSchedule

    if not isinstance(data, dict):
        raise ValueError(f"{path} is not a saved SB3 model (its data is not a JSON object)")
    _check_sizes(Path(path), data)
    env = gym.make(env_id)
    custom: dict[str, Any] = {}
    for key, field in data.items():
        if key == "policy_kwargs" and isinstance(field, dict) and ":serialized:" not in field:
            custom[key] = _policy_kwargs(field)  # stored as plain JSON: checked all the same
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
    """Load a model of one of ``ALGORITHMS`` for ``env_id`` on CPU; with ``trust=False`` (the default)
    nothing in the file is unpickled (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no saved model at {path}")
    cls = algorithm(algo)
    if path.stat().st_size > MAX_TOTAL:
        raise UnsafeModelFile(
            f"{path} is {path.stat().st_size >> 20} MB; a model for these games is far smaller"
        )
    # read once: the bytes checked are the bytes loaded, whatever happens to the file meanwhile
    raw = path.read_bytes()
    custom = None if trust else safe_custom_objects(path, algo, env_id, raw)
    try:
        return cls.load(io.BytesIO(raw), device="cpu", custom_objects=custom)
    except Exception as err:  # weights that do not fit the checked settings, a damaged member, ...
        raise ValueError(
            f"{path} could not be loaded as a {algo} model: {type(err).__name__}: "
            f"{str(err).splitlines()[0][:200] if str(err) else ''}"
        ) from None
