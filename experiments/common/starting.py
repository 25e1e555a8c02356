"""A run that starts from a saved model (``train --init``): which network it builds, which weights it takes.

The new policy is the saved one's, with one change a config may ask for: a critic of its own. An
afterstate policy's logits are its network's scores, and by default SB3's critic reads the same
network, so the value loss retrains the network the policy is. ``policy_kwargs:
{share_features_extractor: false}`` gives the critic its own copy of the starting network (and
``net_arch: {pi: [], vf: [...]}`` its own layers on top); both copies start from the saved weights.
"""

from __future__ import annotations

from typing import Any

#: What a config may change about the starting model's policy.
CHANGEABLE = ("share_features_extractor", "net_arch")
_FEATURES = "features_extractor."


def start_kwargs(saved: dict[str, Any], asked: dict[str, Any] | None) -> dict[str, Any]:
    """The policy_kwargs of a run starting from a model saved with ``saved``: the saved ones, with the
    critic's changes ``asked`` (the config's policy_kwargs) makes. The actor must stay as saved."""
    asked = dict(asked or {})
    other = sorted(set(asked) - set(CHANGEABLE) - {k for k in asked if asked[k] == saved.get(k)})
    if other:
        raise ValueError(f"a run started from a saved model keeps its policy; policy_kwargs may change only "
                         f"{list(CHANGEABLE)}, not {other}")  # fmt: skip
    actor = _actor(saved.get("net_arch"))
    if "net_arch" in asked and _actor(asked["net_arch"]) != actor:
        raise ValueError(f"net_arch {asked['net_arch']!r} changes the saved actor's layers {actor!r}; "
                         "only the critic's ('vf') may change")  # fmt: skip
    return {**saved, **asked}


def _actor(arch: Any) -> Any:
    """The actor's layers of a ``net_arch`` (SB3: a list is shared by actor and critic)."""
    return arch.get("pi") if isinstance(arch, dict) else list(arch or [])


def load_start(policy: Any, saved: Any) -> list[str]:
    """Copy the saved policy's weights into ``policy``. Its network goes into the actor's and, for a
    critic of its own, the critic's copy. Returns the critic's tensors left as initialised (layers
    the saved model did not have); any other tensor that does not fit is an error."""
    own = policy.state_dict()
    weights: dict[str, Any] = {}
    for key, value in saved.state_dict().items():
        names = [key]
        if key.startswith(_FEATURES) and not policy.share_features_extractor:
            rest = key.removeprefix(_FEATURES)
            names += [f"pi_{_FEATURES}{rest}", f"vf_{_FEATURES}{rest}"]
        weights.update({n: value for n in names if n in own and own[n].shape == value.shape})
    fresh = sorted(set(own) - set(weights))
    wrong = [k for k in fresh if not k.startswith(("value_net.", "mlp_extractor.value_net."))]
    if wrong:
        raise ValueError(f"the saved model's weights do not fit this policy: {wrong[:4]}")
    policy.load_state_dict({**own, **weights})
    return fresh
