"""The afterstate network of ``features.ZudeckenAfterstates`` in JAX: the same function, the same
weights.

Pure functions over a dict of arrays whose names and shapes are the torch module's
``state_dict`` (``layers.0.own.weight``, ``head.2.bias``, ...), so weights learned here load into the
torch network as they are and a model learned in JAX plays through SB3, the benchmark and
``quadrat-bench`` on the compiled env. The tests check that both networks give the same scores on
the same observations.

Unlike the torch module, which scores only the coverable groups of a batch (a ragged set),
``Afterstates.scores`` scores all 11 groups of every row and masks the others with ``UNSCORED``:
fixed shapes, as ``jit`` and ``vmap`` need.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from quadrat_env.cards import PACKS
from quadrat_env.registry import rules_for
from quadrat_env.slots.kernel import GROUPS, MATCH, NUM_SLOTS

ZU = "quadrat_env/Zudecken-v0"
#: A move the network does not score (as ``features.UNSCORED``).
UNSCORED = -10.0
#: The network's size by default and at most (as ``features.ZudeckenAfterstates``).
DEFAULTS = {"channels": 32, "layers": 4, "hidden": 64}
LIMITS = {"channels": 512, "layers": 16, "hidden": 4096}
#: MEMBER[m, i]: move m (group m of GROUPS) covers slot i.
MEMBER = np.array([[float(i in g) for i in range(NUM_SLOTS)] for g in GROUPS], np.float32)

Params = dict[str, jax.Array]


def sizes(**kwargs: Any) -> dict[str, int]:
    """The network's size: ``DEFAULTS`` updated by ``kwargs``, checked against ``LIMITS``."""
    unknown = sorted(set(kwargs) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"unknown afterstate network sizes: {', '.join(unknown)} (known: channels, "
                         "layers, hidden)")  # fmt: skip
    out = {**DEFAULTS, **kwargs}
    for name, value in out.items():
        if type(value) is not int or not 1 <= value <= LIMITS[name]:
            raise ValueError(f"afterstate network {name} must be a whole number in 1..{LIMITS[name]}, "
                             f"got {value!r}")  # fmt: skip
    return out


def init_params(key: jax.Array, channels: int, layers: int, hidden: int) -> Params:
    """New weights, drawn as torch's ``nn.Linear`` draws them (uniform in +-1/sqrt(fan_in))."""
    shapes: dict[str, tuple[tuple[int, ...], int]] = {}
    widths = [4] + [channels] * layers
    for i, (a, b) in enumerate(zip(widths, widths[1:], strict=False)):
        shapes[f"layers.{i}.own.weight"], shapes[f"layers.{i}.own.bias"] = ((b, a), a), ((b,), a)
        for part in ("suit", "rank", "grid"):
            shapes[f"layers.{i}.{part}.weight"] = ((b, a), a)
    shapes["head.0.weight"], shapes["head.0.bias"] = (
        ((hidden, 2 * channels), 2 * channels),
        ((hidden,), 2 * channels),
    )
    shapes["head.2.weight"], shapes["head.2.bias"] = ((1, hidden), hidden), ((1,), hidden)
    keys = jax.random.split(key, len(shapes))
    return {name: jax.random.uniform(k, shape, jnp.float32, -1.0, 1.0) / math.sqrt(fan_in)
            for k, (name, (shape, fan_in)) in zip(keys, shapes.items(), strict=True)}  # fmt: skip


def num_layers(params: Params) -> int:
    return sum(1 for name in params if name.endswith(".own.weight"))


def value(params: Params, grid: jax.Array) -> jax.Array:
    """The logit that the deal can still be won from each afterstate ``grid`` (..., 4, ranks, 4)."""

    def linear(name: str, x: jax.Array) -> jax.Array:
        out = x @ params[f"{name}.weight"].T
        return out + params[f"{name}.bias"] if f"{name}.bias" in params else out

    h = grid
    for depth in range(num_layers(params)):
        at = f"layers.{depth}"
        out = jax.nn.relu(linear(f"{at}.own", h) + linear(f"{at}.suit", h.mean(-2, keepdims=True))
                          + linear(f"{at}.rank", h.mean(-3, keepdims=True))
                          + linear(f"{at}.grid", h.mean((-3, -2), keepdims=True)))  # fmt: skip
        h = out if depth == 0 else h + out
    kept = grid[..., 1:2]
    pooled = jnp.concatenate([h.mean((-3, -2)), (h * kept).sum((-3, -2)) / NUM_SLOTS], -1)
    return linear("head.2", jax.nn.relu(linear("head.0", pooled)))[..., 0]


class Afterstates:
    """The network for one Zudecken pack (52 or 32 cards, told by the observation's size):
    afterstates and scores of every move from the env's observation, as ``ZudeckenAfterstates``
    computes them; the JAX afterstate network registered as ``zudecken-afterstates``."""

    #: The network's size: its keyword arguments, checked (``sizes``); new weights (``init``).
    sizes = staticmethod(sizes)
    init = staticmethod(init_params)
    value = staticmethod(value)

    def __init__(self, obs_size: int) -> None:
        packs = {rules_for(ZU, n_cards=p).layout.size: p for p in PACKS}  # 269: 52 cards, 169: 32
        if obs_size not in packs:
            raise ValueError(f"the Zudecken afterstate network expects a Zudecken observation, "
                             f"{tuple(packs)} entries, got {obs_size!r}")  # fmt: skip
        self.pack = n_cards = packs[obs_size]
        layout, cards = rules_for(ZU, n_cards=n_cards).layout, list(PACKS[n_cards])
        self.upcards, self.unseen = layout["upcards"].slice, layout["unseen"].slice
        self.obs_size = layout.size
        self.same = jnp.asarray(MATCH[1][np.ix_(cards, cards)], jnp.float32)  # same suit or rank
        self.other = jnp.asarray(1 - np.eye(NUM_SLOTS), jnp.float32)
        self.member = jnp.asarray(MEMBER)
        self.num_moves = len(GROUPS)
        self.afterstate_shape = (4, n_cards // 4, 4)

    def afterstates(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        """For one observation: every move's afterstate (11, 4, ranks, 4) and whether the network
        scores it (11,) bool: every card of the group matches another of it (a legal group)."""
        up = obs[self.upcards].reshape(NUM_SLOTS, self.pack)
        unseen = obs[self.unseen]
        match = (up @ self.same @ up.T) * self.other  # (4, 4), 0 where a slot is empty
        partner = (match[None] * self.member[:, None, :]).sum(-1) > 0  # (11, 4)
        coverable = (partner | (self.member == 0)).all(-1)
        kept = ((1 - self.member)[:, :, None] * up[None]).sum(1)  # (11, pack)
        stock = unseen.sum() / (self.pack - NUM_SLOTS)
        per_card = jnp.stack([jnp.broadcast_to(unseen, kept.shape), kept], -1)
        scalars = jnp.stack([jnp.broadcast_to(stock, kept.shape[:1]), kept.sum(1) / 4], -1)
        grid = jnp.concatenate([per_card, jnp.broadcast_to(scalars[:, None], (*kept.shape, 2))], -1)
        return grid.reshape(self.num_moves, *self.afterstate_shape), coverable

    def scores(self, params: Params, grid: jax.Array, coverable: jax.Array) -> jax.Array:
        """Every action's score (12: the groups, then "end", never scored)."""
        scored = jnp.where(coverable, value(params, grid), UNSCORED)
        return jnp.concatenate([scored, jnp.full(scored.shape[:-1] + (1,), UNSCORED)], -1)

    def scores_of_coverable(self, params: Params, grid: jax.Array, coverable: jax.Array) -> jax.Array:
        """``scores`` of a batch (n, 11, ...), valuing the coverable afterstates only, as the torch
        network does: about 3 of the 11 a decision, so the network runs on a buffer of 4 or 6 a
        decision when the batch's count fits (else on all). Not for use under ``vmap``: there every
        buffer's branch would run."""
        n, moves = coverable.shape
        flat, scored = grid.reshape(n * moves, *self.afterstate_shape), coverable.reshape(-1)
        count = scored.sum()

        def buffer(size: int) -> Callable[[], jax.Array]:
            def values() -> jax.Array:  # the coverable ones first; the rest point past the end: dropped
                at = jnp.nonzero(scored, size=size, fill_value=n * moves)[0]
                got = value(params, flat[jnp.minimum(at, n * moves - 1)])
                return jnp.full(n * moves, UNSCORED, got.dtype).at[at].set(got, mode="drop")

            return values

        def every() -> jax.Array:
            return jnp.where(scored, value(params, flat), UNSCORED)

        which = (count > 4 * n).astype(jnp.int32) + (count > 6 * n).astype(jnp.int32)
        out = jax.lax.switch(which, [buffer(4 * n), buffer(6 * n), every]).reshape(n, moves)
        return jnp.concatenate([out, jnp.full((n, 1), UNSCORED, out.dtype)], -1)
