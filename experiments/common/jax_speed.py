"""The JAX envs' speed beside the compiled ones (``quadrat speed --jax``): env-steps a second of

* the batched envs as users make them, ``gym.make_vec`` of each compiled ID and of its
  ``quadrat_env_jax/`` twin, random legal moves chosen on the host (an ended deal: a fresh deal
  next step, from the pool below on JAX);
* the JAX rules inside one ``jit(vmap)`` and ``lax.scan``, as a JAX learner runs them, an ended deal
  dealt again in the same step three ways: a deck from a pool dealt ahead
  (``quadrat_env.functional.auto_reset``: what the learners and the JAX batched envs do), a new
  shuffle for every deal at every step (``where(ended, init(key), state)``: both sides run under
  ``vmap``), or its own deal replayed (``init_deck``: the rules alone, no shuffle).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

import quadrat_env

#: How an ended deal is dealt again in the scan: the column order of the table.
MODES = ("pool", "fresh", "replay")
#: The largest batch the ``make_vec`` envs are measured at: above it the host's action choice and
#: the compiled env's memory, not the env, would be measured (a GPU run's 1M and 4M envs: scan only).
VEC_MAX = 65_536


def jax_device() -> str:
    """The device JAX computes on, in words (``gpu: NVIDIA H100 80GB HBM3``, ``cpu: cpu``)."""
    import jax

    device = jax.devices()[0]
    return f"{device.platform}: {device.device_kind}"


def jax_speed(env_id: str, num_envs: int, seconds: float, mode: str, chunk: int = 50) -> float:
    """Env-steps/s of the JAX rules, random legal moves, ``num_envs`` deals, ``chunk`` steps a call;
    ``mode``: one of :data:`MODES`."""
    import jax
    import jax.numpy as jnp

    from quadrat_env.core.jax_pool import where_rows
    from quadrat_env.functional import auto_reset, deck_pool, make

    env = make(env_id)

    def body(carry: Any, _: Any) -> Any:
        state, decks, pool, key = carry
        key, pick, deal = jax.random.split(key, 3)
        noise = jax.random.uniform(pick, state.legal_action_mask.shape)
        state = jax.vmap(env.step)(state, jnp.argmax(jnp.where(state.legal_action_mask, noise, -1.0), axis=1))
        ended = state.terminated | state.truncated
        if mode == "pool":
            state, pool = auto_reset(env, state, ended, pool)
        else:
            new = (jax.vmap(env.init)(jax.random.split(deal, num_envs)) if mode == "fresh"
                   else jax.vmap(env.init_deck)(decks))  # fmt: skip
            state = where_rows(ended, new, state)
        return (state, decks, pool, key), None

    run = jax.jit(lambda carry: jax.lax.scan(body, carry, None, length=chunk)[0])
    decks = jax.vmap(env.random_deck)(jax.random.split(jax.random.PRNGKey(1), num_envs))
    pool = deck_pool(env, jax.random.PRNGKey(2), 4 * num_envs)
    carry = jax.block_until_ready(run((jax.vmap(env.init_deck)(decks), decks, pool, jax.random.PRNGKey(0))))
    calls, start = 0, time.perf_counter()
    while calls < 3 or time.perf_counter() - start < seconds:
        carry = jax.block_until_ready(run(carry))  # each call waited for: dispatch is asynchronous
        calls += 1
    return calls * chunk * num_envs / (time.perf_counter() - start)


def timed(step: Callable[[], int], seconds: float, min_calls: int = 3) -> float:
    """Call ``step`` (which returns env-steps done) for about ``seconds``; env-steps per second."""
    done, calls, start = 0, 0, time.perf_counter()
    while calls < min_calls or time.perf_counter() - start < seconds:
        done += step()
        calls += 1
    return done / (time.perf_counter() - start)


def vector_env(env_id: str, num_envs: int, mode: str | None, seconds: float, **kwargs: Any) -> float:
    """Env-steps/s of ``gym.make_vec(env_id, num_envs)``, random legal moves chosen on the host."""
    venv, step = _stepper(env_id, num_envs, mode, **kwargs)
    result = timed(step, seconds)
    venv.close()
    return result


def vector_pair(env_id: str, twin: str, num_envs: int, seconds: float, rounds: int = 5) -> dict[str, float]:
    """Env-steps/s of the compiled batched env and its JAX twin, timed in turns (``rounds`` of
    ``seconds / rounds`` each) and the median of each taken: a ratio of one run, which a load that
    comes and goes on the machine shifts less than two measurements one after the other."""
    envs = {"compiled": _stepper(env_id, num_envs, None), "jax": _stepper(twin, num_envs, None)}
    rates: dict[str, list[float]] = {name: [] for name in envs}
    for _ in range(rounds):
        for name, (_, step) in envs.items():
            rates[name].append(timed(step, seconds / rounds))
    for venv, _ in envs.values():
        venv.close()
    return {name: float(np.median(r)) for name, r in rates.items()}


def _stepper(env_id: str, num_envs: int, mode: str | None, **kwargs: Any) -> tuple[Any, Callable[[], int]]:
    venv = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode=mode, **kwargs)
    rng = np.random.default_rng(0)
    _, info = venv.reset(seed=0)
    state = {"info": info}

    def step() -> int:
        masks = np.asarray(state["info"]["action_mask"])
        actions = np.argmax(np.where(masks == 1, rng.random(masks.shape), -1.0), axis=1)
        state["info"] = venv.step(actions)[4]
        return num_envs

    for _ in range(3):  # warm up: the first steps may compile (numba) or load compiled code
        step()
    return venv, step


def jax_rows(sizes: tuple[int, ...], seconds: float, vec: bool = True) -> list[tuple[str, Callable[[], Any]]]:
    """The measurements: every ID at every size, the batched envs (``vec``) and the scan's modes."""
    from quadrat_env.registry import jax_id

    tasks: list[tuple[str, Callable[[], Any]]] = []
    for env_id in quadrat_env.MAIN_IDS:
        for n in sizes:
            if vec and n <= VEC_MAX:  # both in turns, the same time in all as two rows had
                task = lambda e=env_id, n=n: vector_pair(e, jax_id(e), n, 2 * seconds)  # noqa: E731
                tasks.append((f"vec {env_id} x{n}", task))
            for mode in MODES:
                label = f"jax {mode} {env_id} x{n}"
                tasks.append((label, lambda e=env_id, n=n, m=mode: jax_speed(e, n, seconds, m)))
    return tasks


def spread_pairs(results: dict[str, Any]) -> dict[str, Any]:
    """``results`` with each pair (``vec <id> xN``: the compiled and the JAX env's rates) as two
    entries, ``vec compiled <id> xN`` and ``vec jax <id> xN``, as the table reads them."""
    out: dict[str, Any] = {}
    for label, value in results.items():
        if label.startswith("vec ") and isinstance(value, dict):
            out.update({f"vec {name} {label[4:]}": rate for name, rate in value.items()})
        else:
            out[label] = value
    return out


def _cell(r: dict[str, Any], *keys: str) -> str:
    return " / ".join("–" if k not in r else f"{r[k]:,.0f}" for k in keys)


def jax_table(r: dict[str, Any]) -> str:
    """The table of a result: a row a game and size (a record without the pool or the batched envs
    leaves their cells empty)."""
    sizes = sorted({int(k.rsplit("x", 1)[1]) for k in r if k.startswith(("jax fresh ", "jax pool "))})
    if not sizes:
        return ""
    lines = [f"On **{r['jax device']}**, jax {r['jax version']}; env-steps/s, random legal moves. "
             "`gym.make_vec`: the compiled batched env / the JAX batched env (fresh deals), timed in turns. "
             "The JAX rules in one `jit(vmap)` and `lax.scan`, an ended deal dealt again from a pool of "
             "decks dealt ahead (`auto_reset`) / with a new shuffle of every deal every step / its own "
             "deal replayed:",
             "", "| env | envs | `make_vec`: compiled / JAX | JAX | scan: pool / shuffle all / replay "
             "| pool / replay |", "|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for env_id in quadrat_env.MAIN_IDS:
        for n in sizes:
            vec = _cell(r, f"vec compiled {env_id} x{n}", f"vec jax {env_id} x{n}")
            ratio = "–"
            if f"vec compiled {env_id} x{n}" in r:
                ratio = f"{r[f'vec jax {env_id} x{n}'] / r[f'vec compiled {env_id} x{n}']:.2f}x"
            scan = _cell(r, *(f"jax {m} {env_id} x{n}" for m in MODES))
            share = "–"
            if f"jax pool {env_id} x{n}" in r:
                share = f"{r[f'jax pool {env_id} x{n}'] / r[f'jax replay {env_id} x{n}']:.2f}"
            lines.append(f"| {env_id.split('/')[1]} | {n:,} | {vec} | {ratio} | {scan} | {share} |")
    return "\n".join(lines) + "\n"
