"""Where td_jax's time goes: each piece of an update jitted and timed alone (results/td_jax_cpu/per_core.md).

    XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1" \\
        python -m scripts.td_jax_profile [ENV_ID]

256 deals, 2 moves each an update (td_jax.yml's settings); the network's default size.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import optax
from quadrat_env.experiments.common.jax_learners.td import JaxTD
from quadrat_env.experiments.td_jax import Settings

from quadrat_env.core.jax_pool import auto_reset

N = 256


def bench(name: str, f: Callable[..., Any], *args: Any, reps: int = 20, moves: int = N) -> Any:
    """The mean of ``reps`` calls after one that compiles; moves (or decisions) a second."""
    out = f(*args)
    jax.block_until_ready(out)
    start = time.perf_counter()
    for _ in range(reps):
        out = f(*args)
    jax.block_until_ready(out)
    took = (time.perf_counter() - start) / reps
    print(f"{name:44s} {took * 1e3:8.2f} ms  {moves / took:12,.0f} a second", flush=True)
    return out


def profile(env_id: str) -> None:
    settings = Settings(env_id=env_id, n_envs=N, n_moves=10**8, seed=0, features="zudecken-afterstates",
                        steps_per_update=2)  # fmt: skip
    t = JaxTD(settings)
    carry = t.init()
    bench("train: 10 updates (moves)", lambda c: t.train(c, 10), carry, reps=5, moves=10 * 2 * N)
    bench("scores of one move of every deal (decisions)", jax.jit(t._scores), carry.params, carry.env)
    after = jax.jit(lambda e: jax.vmap(t.net.afterstates)(jax.vmap(t.core.observe)(e)))
    grids, coverable = bench("afterstates only", after, carry.env)
    bench("the network on all 11 afterstates", jax.jit(t.net.scores), carry.params, grids, coverable)
    bench("the network on the coverable ones", jax.jit(t.net.scores_of_coverable), carry.params, grids,
          coverable)  # fmt: skip
    step = jax.jit(lambda e, a: jax.vmap(t.core.step)(e, a))
    new = bench("env step", step, carry.env, jnp.argmax(carry.env.legal_action_mask, axis=1))
    deal = jax.jit(lambda n, p: auto_reset(t.core, n, n.terminated | n.truncated, p))
    bench("fresh deals for the deals that ended", deal, new, carry.pool)
    x, y = jnp.concatenate([grids[:, 0]] * 2), jnp.zeros(2 * N)

    def loss(p: Any) -> jax.Array:
        return optax.sigmoid_binary_cross_entropy(t.net.value(p, x), y).mean()

    grad = jax.jit(jax.value_and_grad(loss))
    bench("loss and gradient on 512 afterstates", grad, carry.params, moves=2 * N)
    print(f"coverable groups a decision: {float(coverable.sum(1).mean()):.2f} of {t.net.num_moves}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("env_id", nargs="?", default="quadrat_env/Zudecken32-v0", help="a Zudecken ID")
    profile(p.parse_args(argv).env_id)
    return 0


if __name__ == "__main__":
    sys.exit(main())
