"""The jitted core of ``quadrat_env.experiments.ppo_jax``: PPO with action masks, PureJaxRL's design.

The policy is SB3's default actor-critic MLP (separate policy and value networks of ``hidden``
tanh units, orthogonal initial weights as SB3 draws them), written as pure functions over a dict
named and shaped as the torch policy's ``state_dict`` (``mlp_extractor.policy_net.0.weight``, ...),
so a model learned here is an ordinary MaskablePPO model once exported. Illegal actions get the
logit SB3's ``MaskableCategorical`` gives them (-1e8): they are never sampled and carry no gradient.

With ``features`` naming an afterstate network (``zudecken-afterstates``) the policy's logit for a
move is that network's score of the move's afterstate (its weights under ``afterstates/`` in the
params); the critic stays SB3's value MLP on the observation, so only the policy's network changes.
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

#: SB3's logit for a masked action.
MASKED = -1e8
#: Where an afterstate policy's weights are in the params (the rest: the critic).
AFTERSTATES = "afterstates/"
Params = dict[str, jax.Array]


def afterstate_weights(params: Params) -> Params:
    """An afterstate policy's network weights, named as the torch network's ``state_dict``."""
    return {k[len(AFTERSTATES) :]: v for k, v in params.items() if k.startswith(AFTERSTATES)}


def init_policy(key: jax.Array, obs_size: int, n_actions: int, hidden: tuple[int, ...]) -> Params:
    """New weights as SB3's ``ActorCriticPolicy`` draws them: orthogonal, gain sqrt(2) in the hidden
    layers, 0.01 for the action net, 1 for the value net; biases 0."""
    params: Params = {}
    keys = iter(jax.random.split(key, 2 * len(hidden) + 2))
    for net in ("policy_net", "value_net"):
        widths = [obs_size, *hidden]
        for i, (a, b) in enumerate(zip(widths, widths[1:], strict=False)):
            params[f"mlp_extractor.{net}.{2 * i}.weight"] = _orthogonal(next(keys), b, a, math.sqrt(2))
            params[f"mlp_extractor.{net}.{2 * i}.bias"] = jnp.zeros(b)
    last = hidden[-1] if hidden else obs_size
    params["action_net.weight"], params["action_net.bias"] = (
        _orthogonal(next(keys), n_actions, last, 0.01),
        jnp.zeros(n_actions),
    )
    params["value_net.weight"], params["value_net.bias"] = _orthogonal(next(keys), 1, last, 1.0), jnp.zeros(1)
    return params


def _orthogonal(key: jax.Array, rows: int, cols: int, gain: float) -> jax.Array:
    return jax.nn.initializers.orthogonal(gain)(key, (rows, cols), jnp.float32)


def _mlp(params: Params, net: str, obs: jax.Array) -> jax.Array:
    h, i = obs, 0
    while f"mlp_extractor.{net}.{i}.weight" in params:
        h = jnp.tanh(
            h @ params[f"mlp_extractor.{net}.{i}.weight"].T + params[f"mlp_extractor.{net}.{i}.bias"]
        )
        i += 2
    return h


def value(params: Params, obs: jax.Array) -> jax.Array:
    """The critic's value of each observation (SB3's value MLP)."""
    return (_mlp(params, "value_net", obs) @ params["value_net.weight"].T + params["value_net.bias"])[..., 0]


def forward(params: Params, obs: jax.Array, mask: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The MLP policy's masked logits and the value of each observation."""
    logits = _mlp(params, "policy_net", obs) @ params["action_net.weight"].T + params["action_net.bias"]
    return jnp.where(mask, logits, MASKED), value(params, obs)


class Transition(NamedTuple):
    obs: jax.Array
    mask: jax.Array
    action: jax.Array
    logp: jax.Array
    value: jax.Array
    reward: jax.Array
    done: jax.Array


class Carry(NamedTuple):
    params: Params
    opt_state: Any
    env: Any
    pool: DeckPool  # the decks the deals that end take next (quadrat_env.core.jax_pool)
    key: jax.Array  # raw key data (uint32)
    updates: jax.Array


class JaxPPO:
    """One run's functions (``settings``: ``quadrat_env.experiments.ppo_jax.Settings``)."""

    def __init__(self, settings: Any) -> None:
        self.s = s = settings
        self.core = make(s.env_id, **s.env_kwargs)
        self.hidden = tuple(s.hidden)
        obs_size = self.core.observation_shape[0]
        self.net = None if s.features is None else jax_afterstate_network(s.features, obs_size)
        self.size = {} if self.net is None else self.net.sizes(**s.features_kwargs)
        self.moves_per_update = s.n_envs * s.n_steps
        self.total_updates = math.ceil(s.n_moves / self.moves_per_update)
        steps = self.total_updates * s.update_epochs * s.n_minibatches
        lr = optax.linear_schedule(s.learning_rate, s.learning_rate_end, steps)
        self.optimizer = optax.chain(optax.clip_by_global_norm(s.max_grad_norm), optax.adam(lr, eps=1e-5))
        self.train = jax.jit(self._train)
        self.play = jax.jit(self._play)

    def describe(self) -> dict[str, Any]:
        mlp = {"network": "mlp", "net_arch": list(self.hidden), "activation": "tanh"}
        if self.net is None:
            return mlp
        return {"network": self.s.features, "features": self.s.features, "features_kwargs": self.size,
                "critic": mlp}  # fmt: skip

    def init(self) -> Carry:
        key, net_key, env_key = jax.random.split(jax.random.key(self.s.seed), 3)
        params = init_policy(net_key, self.core.observation_shape[0], self.core.num_actions, self.hidden)
        if self.net is not None:  # the afterstate network is the policy; the critic is the MLP's
            drawn = self.net.init(jax.random.fold_in(net_key, 1), **self.size)
            params = {k: v for k, v in params.items() if "value_net" in k}
            params.update({AFTERSTATES + k: v for k, v in drawn.items()})
        env_key, pool_key = jax.random.split(env_key)
        env = jax.vmap(self.core.init)(jax.random.split(env_key, self.s.n_envs))
        pool = deck_pool(self.core, jax.random.key_data(pool_key), POOL_ROUNDS * self.s.n_envs)
        return Carry(params, self.optimizer.init(params), env, pool, jax.random.key_data(key), jnp.int32(0))

    def forward(self, params: Params, obs: jax.Array, mask: jax.Array) -> tuple[jax.Array, jax.Array]:
        """The policy's masked logits and the critic's value of each observation."""
        if self.net is None:
            return forward(params, obs, mask)
        grids, scored = jax.vmap(self.net.afterstates)(obs)
        logits = self.net.scores(afterstate_weights(params), grids, scored)
        return jnp.where(mask, logits, MASKED), value(params, obs)

    def _step(
        self, params: Params, env: Any, pool: DeckPool, key: jax.Array
    ) -> tuple[Any, DeckPool, Transition, Stats]:
        """One sampled move on every deal; a deal that ends is replaced by a new random one."""
        k_move = key
        obs, mask = jax.vmap(self.core.observe)(env), env.legal_action_mask
        logits, value_now = self.forward(params, obs, mask)
        action = jax.random.categorical(k_move, logits)
        logp = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], 1)[:, 0]
        new = jax.vmap(self.core.step)(env, action)
        done = new.terminated | new.truncated  # a cut-off deal counts as ended (no bootstrap), as PureJaxRL
        env, pool = auto_reset(self.core, new, done, pool)
        stats = Stats(new.terminated.sum(), new.won.sum(), jnp.float32(0))
        return env, pool, Transition(obs, mask, action, logp, value_now, new.reward, done), stats

    def _advantages(self, batch: Transition, last_value: jax.Array) -> tuple[jax.Array, jax.Array]:
        """GAE(lambda) over the rollout (time-major); the advantages and the value targets."""
        s = self.s

        def back(
            carry: tuple[jax.Array, jax.Array], t: Transition
        ) -> tuple[tuple[jax.Array, jax.Array], jax.Array]:
            gae, next_value = carry
            keep = 1.0 - t.done
            delta = t.reward + s.gamma * next_value * keep - t.value
            gae = delta + s.gamma * s.gae_lambda * keep * gae
            return (gae, t.value), gae

        _, adv = jax.lax.scan(back, (jnp.zeros_like(last_value), last_value), batch, reverse=True)
        return adv, adv + batch.value

    def _loss(self, params: Params, t: Transition, adv: jax.Array, target: jax.Array) -> jax.Array:
        s = self.s
        logits, new_value = self.forward(params, t.obs, t.mask)
        logp_all = jax.nn.log_softmax(logits)
        logp = jnp.take_along_axis(logp_all, t.action[:, None], 1)[:, 0]
        ratio = jnp.exp(logp - t.logp)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        policy = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - s.clip_eps, 1 + s.clip_eps) * adv).mean()
        clipped = t.value + jnp.clip(new_value - t.value, -s.clip_eps, s.clip_eps)
        value_loss = 0.5 * jnp.maximum((new_value - target) ** 2, (clipped - target) ** 2).mean()
        entropy = -(jnp.exp(logp_all) * logp_all).sum(-1).mean()
        return policy + s.vf_coef * value_loss - s.ent_coef * entropy

    def _epochs(
        self, params: Params, opt_state: Any, data: tuple[Any, ...], key: jax.Array
    ) -> tuple[Any, ...]:
        """``update_epochs`` passes over the rollout in ``n_minibatches`` shuffled minibatches."""
        n, m = self.moves_per_update, self.s.n_minibatches

        def minibatch(
            state: tuple[Params, Any], part: tuple[Any, ...]
        ) -> tuple[tuple[Params, Any], jax.Array]:
            params, opt_state = state
            loss, grads = jax.value_and_grad(self._loss)(params, *part)
            updates, opt_state = self.optimizer.update(grads, opt_state, params)
            return (optax.apply_updates(params, updates), opt_state), loss

        def epoch(state: tuple[Params, Any], k: jax.Array) -> tuple[tuple[Params, Any], jax.Array]:
            order = jax.random.permutation(k, n)
            parts = jax.tree_util.tree_map(lambda x: x[order].reshape(m, n // m, *x.shape[1:]), data)
            return jax.lax.scan(minibatch, state, parts)

        (params, opt_state), losses = jax.lax.scan(epoch, (params, opt_state),
                                                   jax.random.split(key, self.s.update_epochs))  # fmt: skip
        return params, opt_state, losses.mean()

    def _update(self, carry: Carry, _: Any) -> tuple[Carry, Stats]:
        """A rollout of ``n_steps`` moves on every deal, then the PPO epochs over it."""
        key, k_epochs, *keys = jax.random.split(jax.random.wrap_key_data(carry.key), self.s.n_steps + 2)

        def play(
            state: tuple[Any, DeckPool], k: jax.Array
        ) -> tuple[tuple[Any, DeckPool], tuple[Transition, Stats]]:
            env, pool, t, stats = self._step(carry.params, *state, k)
            return (env, pool), (t, stats)

        (env, pool), (batch, stats) = jax.lax.scan(play, (carry.env, carry.pool), jnp.stack(keys))
        last_value = value(carry.params, jax.vmap(self.core.observe)(env))
        adv, target = self._advantages(batch, last_value)
        flat = jax.tree_util.tree_map(
            lambda x: x.reshape(self.moves_per_update, *x.shape[2:]), (batch, adv, target)
        )
        params, opt_state, loss = self._epochs(carry.params, carry.opt_state, flat, k_epochs)
        new = Carry(params, opt_state, env, pool, jax.random.key_data(key), carry.updates + 1)
        return new, Stats(stats.deals.sum(), stats.wins.sum(), loss)

    def _train(self, carry: Carry, n_updates: jax.Array) -> tuple[Carry, Stats]:
        """``n_updates`` updates; the deals ended, deals won and the mean loss over them."""
        return repeat(self._update, carry, n_updates)

    def move_scores(self, params: Params, env: Any) -> jax.Array:
        """Every move's logit in each state (illegal moves ``MASKED``): greedy play takes its argmax."""
        return self.forward(params, jax.vmap(self.core.observe)(env), env.legal_action_mask)[0]

    def _play(self, params: Params, decks: jax.Array) -> jax.Array:
        """Play ``decks`` (pack indices) with the most likely legal action; which deals were won."""
        return play_greedy(self.core, self.move_scores, params, decks)
