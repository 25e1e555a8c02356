"""Fresh deals from a pool of decks drawn ahead (``quadrat_env.functional.auto_reset``): the ended
rows take the pool's next decks in order, no two rows ever share one, the others go on untouched,
the pool is drawn anew before it runs short, and the decks are uniform permutations."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402

chisquare = pytest.importorskip("scipy.stats").chisquare

from quadrat_env.functional import auto_reset, deck_pool, make  # noqa: E402

Z32 = "quadrat_env/Zudecken32-v0"


def numbered(env, size: int):
    """A pool whose deck k is the pack rotated by k: which deck a row was dealt can be read back."""
    pool = deck_pool(env, jax.random.PRNGKey(0), size)
    pack = env.rules.pack_size
    decks = (jnp.arange(pack)[None, :] + jnp.arange(size)[:, None]) % pack
    return pool._replace(decks=decks.astype(jnp.int8), dealt=None)  # auto_reset deals them


def dealt(env, state, rows: list[int]) -> list[int]:
    """Which deck of a ``numbered`` pool each of ``rows`` was dealt (its observation tells)."""
    pack = env.rules.pack_size
    decks = ((jnp.arange(pack)[None, :] + jnp.arange(pack)[:, None]) % pack).astype(jnp.int8)
    known = np.asarray(jax.vmap(env.observe)(jax.vmap(env.init_deck)(decks)))
    obs = np.asarray(jax.vmap(env.observe)(state))
    return [int(np.flatnonzero((known == obs[r]).all(1))[0]) for r in rows]


def test_ended_rows_take_the_next_decks_in_order_and_the_others_go_on():
    env = make(Z32)
    pool = numbered(env, 12)
    start = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(1), 4))
    ended = jnp.array([False, True, False, True])
    state, pool = auto_reset(env, start, ended, pool)
    assert dealt(env, state, [1, 3]) == [0, 1] and int(pool.taken) == 2
    for row in (0, 2):  # untouched: every leaf as it was
        same = jax.tree_util.tree_map(lambda a, b, r=row: bool(jnp.array_equal(a[r], b[r])), state, start)
        assert all(jax.tree_util.tree_leaves(same))
    state, pool = auto_reset(env, state, jnp.array([True, True, False, False]), pool)
    assert dealt(env, state, [0, 1]) == [2, 3] and int(pool.taken) == 4


def test_a_refill_deals_the_decks_left_first_so_no_deck_drawn_is_wasted():
    env = make(Z32)
    pool = numbered(env, 8)
    state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(6), 4))
    for _ in range(2):  # 6 of the 8 decks dealt: 2 left, fewer than the 4 rows
        state, pool = auto_reset(env, state, jnp.array([True, True, True, False]), pool)
    assert int(pool.taken) == 6
    state, pool = auto_reset(env, state, jnp.ones(4, bool), pool)  # refilled: 2 left, then 4 new
    assert dealt(env, state, [0, 1]) == [6, 7] and int(pool.taken) == 6 and pool.decks.shape == (8, 32)


def test_the_pool_is_drawn_anew_before_it_runs_short_and_no_deck_is_dealt_twice():
    env = make(Z32)
    pool = deck_pool(env, jax.random.PRNGKey(3), 8)
    state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(4), 4))
    seen, step = [], jax.jit(lambda s, e, p: auto_reset(env, s, e, p))
    for _ in range(7):  # every row ends every step: 28 decks from pools of 8, several drawn anew
        state, pool = step(state, jnp.ones(4, bool), pool)
        seen += [tuple(np.asarray(o)) for o in jax.vmap(env.observe)(state)]
        assert int(pool.taken) <= 8
    assert len(set(seen)) == len(seen) == 28


def test_the_same_key_deals_the_same_and_a_short_pool_is_refused():
    env = make(Z32)
    start = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(5), 6))
    ended = jnp.array([True, False, True, True, False, True])
    a, _ = auto_reset(env, start, ended, deck_pool(env, jax.random.PRNGKey(9), 12))
    b, _ = auto_reset(env, start, ended, deck_pool(env, jax.random.PRNGKey(9), 12))
    assert all(
        jax.tree_util.tree_leaves(jax.tree_util.tree_map(lambda x, y: bool(jnp.array_equal(x, y)), a, b))
    )
    with pytest.raises(ValueError, match="cannot cover 6 rows .* least 12"):
        auto_reset(env, start, ended, deck_pool(env, jax.random.PRNGKey(9), 11))
    with pytest.raises(ValueError, match="size"):
        deck_pool(env, jax.random.PRNGKey(9), 0)


def test_the_pools_decks_are_uniform_permutations():
    """20,000 decks of 32 cards from pools drawn in turn: each card's count at each position, and the
    first card's, against the uniform (chi-square; fixed keys, so the test is deterministic)."""
    env = make(Z32)
    pool, decks = deck_pool(env, jax.random.PRNGKey(11), 2000), []
    for _ in range(10):
        decks.append(np.asarray(pool.decks))
        pool = deck_pool(env, pool.key, 2000)
    decks = np.concatenate(decks)
    assert (np.sort(decks, axis=1) == np.arange(32)).all()  # permutations of the pack
    counts = np.stack([np.bincount(decks[:, p], minlength=32) for p in range(32)])  # position x card
    assert chisquare(counts[0]).pvalue > 1e-3
    assert chisquare(counts.ravel()).pvalue > 1e-3
    # the check sees a bias: a pool where the first card is never the last card of the pack
    biased = np.where(decks[:, 0] == 31, decks[:, 1], decks[:, 0])
    assert chisquare(np.bincount(biased, minlength=32)).pvalue < 1e-6


def test_a_checkpoint_keeps_the_decks_and_the_dealt_states_are_dealt_again_the_same():
    from quadrat_env.core.jax_pool import redealt, without_dealt

    env = make(Z32)
    pool = deck_pool(env, jax.random.PRNGKey(21), 8)
    carry = {"pool": pool, "other": jnp.arange(3)}
    kept = without_dealt(carry)
    assert len(jax.tree_util.tree_leaves(kept)) == 4  # decks, taken, key and the other array
    back = redealt(env, kept)
    same = jax.tree_util.tree_map(lambda a, b: bool(jnp.array_equal(a, b)), back, carry)
    assert all(jax.tree_util.tree_leaves(same))
    start = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(22), 4))
    ended = jnp.array([True, False, True, True])
    a, _ = auto_reset(env, start, ended, pool)
    b, _ = auto_reset(env, start, ended, kept["pool"])  # a pool with no states deals them first
    assert all(
        jax.tree_util.tree_leaves(jax.tree_util.tree_map(lambda x, y: bool(jnp.array_equal(x, y)), a, b))
    )


def test_the_swaps_positions_are_the_multiply_shift_of_their_words_exactly():
    """``below`` is floor(w * span / 2**32), computed in 32-bit halves: against numpy's 64-bit
    product on words that reach both ends and random ones."""
    from quadrat_env.core.jax_pool import below

    rng = np.random.default_rng(5)
    words = np.concatenate([[0, 1, 2**16 - 1, 2**16, 2**32 - 1], rng.integers(0, 2**32, 5000)]).astype(
        np.uint32
    )
    for span in (1, 2, 13, 32, 52, 2**16):
        exact = (words.astype(np.uint64) * np.uint64(span)) >> np.uint64(32)
        got = np.asarray(below(jnp.asarray(words), span))
        assert (got == exact).all() and got.max() == span - 1
