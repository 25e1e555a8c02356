"""Every game in JAX: the functional API (pgx / gymnax / PureJaxRL style) and the Gymnasium IDs.

Needs the ``jax`` extra (``pip install "quadrat-env[jax]"``: CPU JAX; for a GPU install JAX's CUDA
build as JAX's own install guide says, e.g. ``pip install -U "jax[cuda13]"``). ``import quadrat_env``
never imports jax; this module imports it only when an env is made.

Functional API, one object per env ID (``make``):

    import jax
    from quadrat_env.functional import make

    env = make("quadrat_env/Zudecken-v0")          # or "quadrat_env_jax/Zudecken-v0"
    state = jax.vmap(env.init)(jax.random.split(key, 4096))   # State: board, legal_action_mask, ...
    obs = jax.vmap(env.observe)(state)              # float32, the compiled env's layout and values
    state = jax.vmap(env.step)(state, actions)      # state.reward, state.terminated, state.truncated

Gymnasium IDs: each game's ``quadrat_env/<Name>-v0`` has a twin ``quadrat_env_jax/<Name>-v0`` built
on Gymnasium's ``FunctionalJaxEnv`` / ``FunctionalJaxVectorEnv`` (``gym.make``, ``gym.make_vec``),
with the same options, masks and infos as the compiled env, returning jax arrays.
"""

from __future__ import annotations

from typing import Any

from quadrat_env.core.env import ENV_KWARGS
from quadrat_env.extras import needs
from quadrat_env.registry import compiled_id


def _need_jax(what: str) -> None:
    try:
        import jax  # noqa: F401
    except ImportError:
        raise needs("jax", "jax", what) from None


def make(env_id: str, **kwargs: Any) -> Any:
    """The functional API (``quadrat_env.core.jax_core.JaxPatience``) of ``env_id`` (a compiled or
    a JAX ID) with its registered kwargs, updated by ``kwargs``: the rule kwargs of the ID
    (``win``, ``cover``, ``n_cards``, ``redeals``) and ``reward_mode``, ``illegal_action``,
    ``illegal_penalty``, ``max_episode_steps`` (default: the registered time limit; None: none)."""
    _need_jax(f"quadrat_env.functional.make({env_id!r})")
    from quadrat_env.core.jax_env import functional_env

    return functional_env(env_id, **kwargs)


def make_env(env_id: str, **kwargs: Any) -> Any:
    """Gymnasium's entry point of a ``quadrat_env_jax/...`` ID (``gym.make``)."""
    _need_jax(f"gym.make({compiled_id(env_id)!r} on JAX)")
    from quadrat_env.core.jax_env import PatienceJaxEnv

    return PatienceJaxEnv(env_id, **kwargs)


def make_vector_env(env_id: str, num_envs: int = 1, **kwargs: Any) -> Any:
    """Gymnasium's vector entry point of a ``quadrat_env_jax/...`` ID (``gym.make_vec``)."""
    _need_jax(f"gym.make_vec({compiled_id(env_id)!r} on JAX)")
    from quadrat_env.core.jax_env import PatienceJaxVectorEnv

    return PatienceJaxVectorEnv(env_id, num_envs=num_envs, **kwargs)


def deck_pool(env: Any, key: Any, size: int) -> Any:
    """``size`` shuffled decks of ``env`` drawn and dealt ahead (``quadrat_env.core.jax_pool.DeckPool``),
    for ``auto_reset``: at least twice the batch's rows (four times is what the learners take);
    refilled as it runs low."""
    _need_jax("quadrat_env.functional.deck_pool")
    from quadrat_env.core.jax_pool import deck_pool as draw

    return draw(env, key, size)


def auto_reset(env: Any, state: Any, ended: Any, pool: Any) -> tuple[Any, Any]:
    """A batch of states (rows first) whose rows where ``ended`` start a new deal from ``pool``, and
    the pool less the decks it gave: fresh deals at the cost of the deals that ended, not of every
    row (``quadrat_env.core.jax_pool``); use inside ``jit``, as pgx's ``auto_reset``."""
    from quadrat_env.core.jax_pool import auto_reset as reset

    return reset(env, state, ended, pool)


__all__ = ["ENV_KWARGS", "auto_reset", "deck_pool", "make", "make_env", "make_vector_env"]
