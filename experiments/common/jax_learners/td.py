"""The jitted core of ``quadrat_env.experiments.td_jax``: env, policy and learner in one ``lax.scan``.

Everything a run depends on is the ``Carry`` (the network's weights, Adam's state, every env's
deal, the afterstates waiting for their targets, the random key and the update count): a pytree of
arrays that a checkpoint stores leaf by leaf, so a resumed run repeats an uninterrupted one.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax
from quadrat_env.agents.networks import jax_afterstate_network
from quadrat_env.experiments.common.jax_learners.run import POOL_ROUNDS, Stats, play_greedy, repeat

from quadrat_env.core.jax_pool import DeckPool, auto_reset, deck_pool
from quadrat_env.functional import make


class Pending(NamedTuple):
    """Each env's last afterstate, waiting for its target: the next decision's value or the reward."""

    x: jax.Array  # (n_envs, *the network's afterstate_shape)
    reward: jax.Array
    ok: jax.Array  # the move was scored and the deal was not cut off by the time limit
    done: jax.Array


class Carry(NamedTuple):
    params: dict[str, jax.Array]
    opt_state: Any
    env: Any  # quadrat_env.core.jax_core.State, one row per env
    pool: DeckPool  # the decks the deals that end take next (quadrat_env.core.jax_pool)
    pending: Pending
    key: jax.Array  # raw key data (uint32), so that a checkpoint stores it as an array
    updates: jax.Array


class JaxTD:
    """One run's functions (``settings``: ``quadrat_env.experiments.td_jax.Settings``)."""

    def __init__(self, settings: Any) -> None:
        self.s = settings
        self.core = make(settings.env_id, **settings.env_kwargs)
        self.net = jax_afterstate_network(settings.features, self.core.observation_shape[0])
        self.size = self.net.sizes(**settings.features_kwargs)
        self.moves_per_update = settings.n_envs * settings.steps_per_update
        self.total_updates = math.ceil(settings.n_moves / self.moves_per_update)
        lr = optax.linear_schedule(settings.learning_rate, settings.learning_rate_end, self.total_updates)
        self.optimizer = optax.adam(lr)
        self.train = jax.jit(self._train)
        self.play = jax.jit(self._play)
        #: Value only the coverable afterstates (``scores_of_coverable``); off where the calls are
        #: vmapped over seeds, where its data-dependent branch would run every branch.
        self.compact = True

    def init(self) -> Carry:
        key, net_key, env_key = jax.random.split(jax.random.key(self.s.seed), 3)
        params = self.net.init(net_key, **self.size)
        n = self.s.n_envs
        env_key, pool_key = jax.random.split(env_key)
        env = jax.vmap(self.core.init)(jax.random.split(env_key, n))
        pool = deck_pool(self.core, jax.random.key_data(pool_key), POOL_ROUNDS * n)
        pending = Pending(jnp.zeros((n, *self.net.afterstate_shape), jnp.float32), jnp.zeros(n, jnp.float32),
                          jnp.zeros(n, bool), jnp.zeros(n, bool))  # fmt: skip
        return Carry(
            params, self.optimizer.init(params), env, pool, pending, jax.random.key_data(key), jnp.int32(0)
        )

    def describe(self) -> dict[str, Any]:
        return {"network": self.s.features, "features": self.s.features, "features_kwargs": self.size}

    def epsilon(self, updates: jax.Array) -> jax.Array:
        """From ``epsilon_start`` at the first move to ``epsilon_end`` at the run's last, linearly."""
        done = jnp.minimum(1.0, updates * self.moves_per_update / self.s.n_moves)
        return self.s.epsilon_start + (self.s.epsilon_end - self.s.epsilon_start) * done

    def _scores(self, params: dict[str, jax.Array], env: Any) -> tuple[jax.Array, jax.Array, jax.Array]:
        """Every env's afterstates, which the network scores, and the legal moves' scores (-inf else)."""
        grids, coverable = jax.vmap(self.net.afterstates)(jax.vmap(self.core.observe)(env))
        score = self.net.scores_of_coverable if self.compact else self.net.scores
        scores = score(params, grids, coverable)
        return grids, coverable, jnp.where(env.legal_action_mask, scores, -jnp.inf)

    def _step(self, params: dict[str, jax.Array], env: Any, pool: DeckPool, pending: Pending, key: jax.Array,
              eps: jax.Array) -> tuple[Any, DeckPool, Pending, tuple[jax.Array, ...], Stats]:  # fmt: skip
        """One move on every deal: targets for the last afterstates, then an epsilon-greedy move."""
        grids, coverable, scores = self._scores(params, env)
        best, value = scores.argmax(1), jax.nn.sigmoid(scores.max(1))
        target = jnp.where(pending.done, pending.reward, value)  # the deal's end, or the next value
        k_explore, k_move = jax.random.split(key)
        n = best.shape[0]
        explore = jax.random.uniform(k_explore, (n,)) < eps
        random_move = (jax.random.uniform(k_move, scores.shape) * env.legal_action_mask).argmax(1)
        action = jnp.where(explore, random_move, best)
        move = jnp.minimum(action, self.net.num_moves - 1)
        rows = jnp.arange(n)
        scored = coverable[rows, move] & (action < self.net.num_moves)
        new = jax.vmap(self.core.step)(env, action)
        ok = scored & (new.terminated | ~new.truncated)  # a cut-off deal has no target: dropped
        ended = new.terminated | new.truncated
        env, pool = auto_reset(self.core, new, ended, pool)
        stats = Stats(new.terminated.sum(), new.won.sum(), jnp.float32(0))
        pending_now = Pending(grids[rows, move], new.reward, ok, new.terminated)
        return env, pool, pending_now, (pending.x, target, pending.ok), stats

    def _update(self, carry: Carry, _: Any) -> tuple[Carry, Stats]:
        """``steps_per_update`` moves on every deal, then one Adam step on their targets."""
        key, *keys = jax.random.split(jax.random.wrap_key_data(carry.key), self.s.steps_per_update + 1)
        eps = self.epsilon(carry.updates)

        def play(
            state: tuple[Any, DeckPool, Pending], k: jax.Array
        ) -> tuple[tuple[Any, DeckPool, Pending], Any]:
            env, pool, pending, batch, stats = self._step(carry.params, *state, k, eps)
            return (env, pool, pending), (batch, stats)

        start = (carry.env, carry.pool, carry.pending)
        (env, pool, pending), ((x, y, ok), stats) = jax.lax.scan(play, start, jnp.stack(keys))

        def loss_fn(params: dict[str, jax.Array]) -> jax.Array:
            losses = optax.sigmoid_binary_cross_entropy(self.net.value(params, x), y)
            return (losses * ok).sum() / jnp.maximum(ok.sum(), 1)

        loss, grads = jax.value_and_grad(loss_fn)(carry.params)
        updates, opt_state = self.optimizer.update(grads, carry.opt_state, carry.params)
        params = optax.apply_updates(carry.params, updates)
        new = Carry(params, opt_state, env, pool, pending, jax.random.key_data(key), carry.updates + 1)
        return new, Stats(stats.deals.sum(), stats.wins.sum(), loss)

    def _train(self, carry: Carry, n_updates: jax.Array) -> tuple[Carry, Stats]:
        """``n_updates`` updates; the deals ended, deals won and the mean loss over them."""
        return repeat(self._update, carry, n_updates)

    def move_scores(self, params: dict[str, jax.Array], env: Any) -> jax.Array:
        """Every move's score in each state (illegal moves -inf): the greedy policy plays its argmax."""
        return self._scores(params, env)[2]

    def _play(self, params: dict[str, jax.Array], decks: jax.Array) -> jax.Array:
        """Play ``decks`` (pack indices) greedily on the scores; which deals were won."""
        return play_greedy(self.core, self.move_scores, params, decks)
