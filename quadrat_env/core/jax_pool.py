"""Fresh deals at the cost of the deals that end: decks shuffled and dealt ahead, a batch at a time.

Under ``vmap`` both sides of a ``where`` run, so an autoreset written as
``where(ended, env.init(key), state)`` shuffles a new deck for every env at every step, although
only the envs whose deal ended need one (under random play about one Zudecken deal in twelve ends
at a step, one Quadrille deal in a hundred and fifty). ``auto_reset`` instead deals the ended envs
decks from a ``DeckPool``: ``size`` decks shuffled and dealt (``init_deck``) in one batched call and
taken in order. When the decks left might not cover the next step (fewer than its rows), the pool
is refilled (one branch of a ``lax.cond``, on the whole batch): the decks left move to the front and
``size - rows`` new ones follow, so every deck drawn is dealt. A step then only copies the dealt
rows it takes: neither the shuffle nor the deal runs for every env. Every deck is a uniform random
permutation from a key of its own, used once: two envs never share one, and the decks follow from
the pool's key alone (reproducible from a seed).

Under a ``vmap`` of the whole loop (several seeds as one program) the ``cond`` becomes a select,
and the pool is refilled every step (``size - rows`` shuffles): the same deals, at more cost.

The dealt states are a function of the decks, so a checkpoint keeps only the decks
(``without_dealt``) and ``auto_reset`` deals a pool that has none again (``with_dealt``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from quadrat_env.core.checks import whole


class DeckPool(NamedTuple):
    """Decks drawn and dealt ahead: ``decks[taken:]`` are the unused ones; ``key`` draws the next ones."""

    decks: jax.Array  # int8[size, pack]: pack indices, index 0 dealt first
    taken: jax.Array  # int32
    key: jax.Array  # a PRNG key (uint32[2], as jax.random.PRNGKey makes)
    #: The env's ``State`` of each deck, dealt ahead (rows first); None: not dealt yet.
    dealt: Any = None


def deck_pool(env: Any, key: jax.Array, size: int) -> DeckPool:
    """A pool of ``size`` shuffled decks of ``env`` (``quadrat_env.functional.make``'s), from ``key``."""
    whole("size", size, minimum=1)
    return _draw(env, key, size)


def _draw(env: Any, key: jax.Array, size: int) -> DeckPool:
    key, draw = jax.random.split(key)
    return with_dealt(env, DeckPool(shuffled(draw, size, env.rules.pack_size), jnp.int32(0), key))


def with_dealt(env: Any, pool: DeckPool) -> DeckPool:
    """``pool`` with each of its decks dealt (``env.init_deck``), if it has no dealt states."""
    return pool if pool.dealt is not None else pool._replace(dealt=jax.vmap(env.init_deck)(pool.decks))


def redealt(env: Any, tree: Any) -> Any:
    """``tree`` with every pool that has no dealt states dealt (after ``without_dealt``)."""
    deal = jax.jit(lambda pool: with_dealt(env, pool))
    return _pools(lambda pool: deal(pool) if pool.dealt is None else pool, tree)


def without_dealt(tree: Any) -> Any:
    """``tree`` (a learner's carry, say) with every pool's dealt states left out: what a checkpoint
    keeps, as they follow from the decks."""
    return _pools(lambda pool: pool._replace(dealt=None), tree)


def _pools(change: Any, tree: Any) -> Any:
    return jax.tree_util.tree_map(lambda x: change(x) if _is_pool(x) else x, tree, is_leaf=_is_pool)


def _is_pool(x: Any) -> bool:
    return isinstance(x, DeckPool)


def shuffled(key: jax.Array, size: int, pack: int) -> jax.Array:
    """``size`` uniform random permutations of ``0 .. pack - 1`` (int8), by Fisher-Yates run on
    every row at once: ``pack - 1`` swaps, position i with a position j <= i. On a CPU this is
    several times quicker than ``jax.random.permutation`` under ``vmap``, which sorts every row
    (the speed page's table: ``quadrat speed --jax only``).

    Each j is ``floor(w * (i + 1) / 2**32)`` of a random 32-bit word ``w`` (Lemire's multiply-shift):
    a word a swap, where ``jax.random.randint`` draws two and divides, at about four times the cost.
    Each j is uniform on 0..i to within ``(i + 1) / 2**32`` (at most 1.2e-8 for 52 cards)."""
    picks = below(jax.random.bits(key, (pack, size), jnp.uint32), jnp.arange(1, pack + 1)[:, None])
    rows = jnp.arange(size)  # picks row i: 0..i

    def swap(k: jax.Array, decks: jax.Array) -> jax.Array:
        i = pack - 1 - k
        j = picks[i]
        here, there = decks[:, i], decks[rows, j]
        return decks.at[:, i].set(there).at[rows, j].set(here)

    start = jnp.broadcast_to(jnp.arange(pack, dtype=jnp.int8), (size, pack))
    return jax.lax.fori_loop(0, pack - 1, swap, start)


def below(words: jax.Array, span: jax.Array) -> jax.Array:
    """``floor(words * span / 2**32)`` (int32): of 32-bit words, numbers in ``0 .. span - 1``;
    ``span`` at most 2**16 (the product is taken in 32-bit halves: JAX has no 64-bit integers by
    default)."""
    span = jnp.asarray(span, dtype=jnp.uint32)
    high, low = words >> 16, words & 0xFFFF
    return ((high * span + ((low * span) >> 16)) >> 16).astype(jnp.int32)


def auto_reset(env: Any, state: Any, ended: jax.Array, pool: DeckPool) -> tuple[Any, DeckPool]:
    """``state`` (a batch: rows first) with each row where ``ended`` dealt a new deck from ``pool``,
    the others as they were; and the pool less the decks it gave. The pool holds at least twice as
    many decks as rows, so that a refill covers the next step (a smaller one is refused when traced)."""
    rows, size = ended.shape[0], pool.decks.shape[0]
    if size < 2 * rows:
        raise ValueError(f"a pool of {size} decks cannot cover {rows} rows ending at once and be refilled; "
                         f"draw one of at least {2 * rows}")  # fmt: skip
    pool = jax.lax.cond(
        pool.taken + rows > size, lambda p: _refill(env, p, rows), lambda p: p, with_dealt(env, pool)
    )
    slot = pool.taken + jnp.cumsum(ended, dtype=jnp.int32) - 1  # the k-th ended row takes the k-th deck
    take = jnp.where(ended, slot, 0)
    fresh = jax.tree_util.tree_map(lambda x: x[take], pool.dealt)
    return where_rows(ended, fresh, state), pool._replace(taken=pool.taken + ended.sum(dtype=jnp.int32))


def _refill(env: Any, pool: DeckPool, rows: int) -> DeckPool:
    """``pool`` with its last ``rows`` decks first (those left, fewer than ``rows``, are among them,
    at its end) and ``size - rows`` new ones after: no deck left is lost, none drawn is wasted."""
    size = pool.decks.shape[0]
    new = _draw(env, pool.key, size - rows)

    def join(old: jax.Array, fresh: jax.Array) -> jax.Array:
        return jnp.concatenate([old[size - rows :], fresh])

    decks, dealt = join(pool.decks, new.decks), jax.tree_util.tree_map(join, pool.dealt, new.dealt)
    return DeckPool(decks, pool.taken - (size - rows), new.key, dealt)


def where_rows(rows: jax.Array, a: Any, b: Any) -> Any:
    """Row ``i`` of every leaf from ``a`` where ``rows[i]``, else from ``b`` (pytrees, rows first)."""
    return jax.tree_util.tree_map(
        lambda x, y: jnp.where(rows.reshape(rows.shape + (1,) * (x.ndim - 1)), x, y), a, b
    )
