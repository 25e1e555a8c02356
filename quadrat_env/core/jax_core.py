"""The env step of every game in JAX: deal, legal check, "end", play, reward, time limit.

The JAX twin of ``quadrat_env.core.kernel``'s ``_start`` and ``_act``: a game supplies its rules as
pure functions over a small board pytree (``JaxRules``, written beside its compiled kernel), and
``JaxPatience`` turns them into the functional API that pgx, gymnax and PureJaxRL users expect:

    env = quadrat_env.functional.make("quadrat_env/Zudecken-v0")
    state = jax.jit(jax.vmap(env.init))(jax.random.split(key, 4096))
    state = jax.jit(jax.vmap(env.step))(state, actions)
    obs = jax.vmap(env.observe)(state)

Every function is pure, has no Python branch on a traced value, and works under ``jit``, ``vmap``
and ``lax.scan``. An episode's bookkeeping lives in the ``State``: the legal-action mask, the last
reward, whether the episode ended (terminated) or reached the time limit (truncated), whether the
last step won or was illegal, and the cards left.

Inside ``jit`` nothing can raise, so bad actions follow the env's ``illegal_action`` setting as the
compiled step does: an action the mask forbids, or one outside ``0 .. num_actions - 1``, costs
``illegal_penalty`` and changes nothing ("penalize"), also ends the episode, lost ("end"), or only
sets ``state.illegal`` and changes nothing else ("raise": the Gymnasium adapter then raises
``IllegalMove``); a Python integer too large for int32 is such an action too. A step on an ended
episode returns the state as it was with reward 0. Called eagerly (not traced), ``init_deck`` and
``pack_indices`` check their decks and raise ``ValueError``; inside ``jit`` a deck is not checked.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

import jax
import jax.numpy as jnp
import numpy as np

from quadrat_env.core.checks import choice, number, whole
from quadrat_env.core.env import ILLEGAL_MODES, REWARD_MODES

INT32_MAX = 2**31 - 1


class JaxRules(Protocol):
    """A game's rules in JAX (pure functions; ``board`` is the game's own pytree of int arrays)."""

    name: str
    pack_size: int
    #: Moves ``0 .. num_moves - 1`` (an "end" action, if the env has one, comes after them).
    num_moves: int
    obs_size: int

    def deal(self, deck: jax.Array) -> Any:
        """The opening board of ``deck`` (pack indices 0..P-1, index 0 dealt first)."""

    def legal(self, board: Any) -> jax.Array:
        """bool[num_moves]: the legal moves."""

    def play(self, board: Any, move: jax.Array) -> Any:
        """The board after the legal move ``move``."""

    def cards_left(self, board: Any) -> jax.Array:
        """Cards not yet laid off / covered / on the piles (int32)."""

    def won(self, board: Any) -> jax.Array:
        """Whether a finished game (no legal move) is won."""

    def observe(self, board: Any) -> jax.Array:
        """float32[obs_size], the same values as the compiled rules' observation row."""


class State(NamedTuple):
    """One deal's state: the game's board and the episode's bookkeeping."""

    board: Any
    #: bool[num_actions]: the legal actions ("end" included where the env has it).
    legal_action_mask: jax.Array
    #: float32: the reward of the last step.
    reward: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    #: The last step won the game (True only in that step).
    won: jax.Array
    #: The last step's action was not legal.
    illegal: jax.Array
    cards_left: jax.Array
    #: Steps since the deal.
    elapsed: jax.Array


class JaxPatience:
    """The functional API of one env ID (``quadrat_env.functional.make``): ``init``, ``init_deck``,
    ``step``, ``observe``; the same settings as the Gymnasium env of that ID."""

    def __init__(self, rules: JaxRules, *, has_end_action: bool, reward_mode: str = "sparse",
                 illegal_action: str = "penalize", illegal_penalty: float = 0.01,
                 max_episode_steps: int | None = None) -> None:  # fmt: skip
        choice("reward_mode", reward_mode, REWARD_MODES)
        choice("illegal_action", illegal_action, ILLEGAL_MODES)
        self.rules = rules
        self.illegal_penalty = float(number("illegal_penalty", illegal_penalty, minimum=0))
        self.max_episode_steps = 0 if max_episode_steps is None else whole(
            "max_episode_steps", max_episode_steps, minimum=1)  # fmt: skip
        if self.max_episode_steps > INT32_MAX:  # the step count is an int32
            raise ValueError(f"max_episode_steps must be at most 2**31 - 1, got {max_episode_steps!r}")
        self.reward_mode, self.illegal_action = reward_mode, illegal_action
        self.end_action: int | None = rules.num_moves if has_end_action else None
        self.num_actions = rules.num_moves + int(has_end_action)
        self.observation_shape = (rules.obs_size,)
        # the reward of a move that leaves k cards fewer, not won and won: the compiled step's sum
        # (float64) rounded once to float32, so the two agree to the bit
        gone = np.arange(rules.pack_size + 1) / rules.pack_size * (reward_mode == "dense")
        self._rewards = jnp.asarray(np.stack([gone, gone + 1.0]).astype(np.float32))

    def __repr__(self) -> str:
        return f"JaxPatience({self.rules.name!r}, num_actions={self.num_actions})"

    def random_deck(self, key: jax.Array) -> jax.Array:
        """A shuffled deck (pack indices, index 0 dealt first)."""
        return jax.random.permutation(key, self.rules.pack_size).astype(jnp.int8)

    def init(self, key: jax.Array) -> State:
        """A random deal."""
        return self.init_deck(self.random_deck(key))

    def init_deck(self, deck: jax.Array) -> State:
        """The deal ``deck`` (pack indices 0..P-1, index 0 dealt first; ``pack_indices`` turns card
        numbers into them). Called eagerly, a deck that is not each index once raises ``ValueError``;
        a traced one is not checked (the Gymnasium env checks its decks before)."""
        if not isinstance(deck, jax.core.Tracer):
            check_indices(np.asarray(deck), self.rules.pack_size)
        board = self.rules.deal(jnp.asarray(deck, dtype=jnp.int8))
        moves = self.rules.legal(board)
        mask = self._with_end(moves, ~moves.any())
        false = jnp.bool_(False)
        return State(board, mask, jnp.float32(0.0), false, false, false, false,
                     self.rules.cards_left(board), jnp.int32(0))  # fmt: skip

    def _with_end(self, moves: jax.Array, end_legal: jax.Array) -> jax.Array:
        if self.end_action is None:
            return moves
        return jnp.concatenate([moves, end_legal[None]])

    def observe(self, state: State) -> jax.Array:
        """The observation (float32, the compiled env's layout and values)."""
        return self.rules.observe(state.board)

    def step(self, state: State, action: jax.Array, key: jax.Array | None = None) -> State:
        """One env step (``key`` is unused: the deal's order decides everything; it is accepted
        for APIs that pass one). See the module docstring for bad actions and ended episodes."""
        if isinstance(action, (int, np.integer)) and not -INT32_MAX <= action <= INT32_MAX:
            action = -1  # out of range, as any action outside 0 .. num_actions - 1 (not an overflow)
        action = jnp.asarray(action, dtype=jnp.int32)
        in_range = (action >= 0) & (action < self.num_actions)
        legal = in_range & state.legal_action_mask[jnp.clip(action, 0, self.num_actions - 1)]
        is_end = legal & (action == (self.end_action if self.end_action is not None else -1))
        played = self._play(state, jnp.clip(action, 0, self.rules.num_moves - 1))
        bad = self._illegal(state)
        none = jnp.zeros_like(state.legal_action_mask)
        ended = state._replace(reward=jnp.float32(0.0), illegal=jnp.bool_(False), won=jnp.bool_(False),
                               terminated=jnp.bool_(True), legal_action_mask=none)  # fmt: skip
        new = _pick(legal & ~is_end, played, _pick(is_end, ended, bad))
        elapsed = state.elapsed + 1
        limit = self.max_episode_steps
        new = new._replace(elapsed=elapsed, truncated=jnp.bool_(limit > 0) & (elapsed >= limit))
        return _pick(state.terminated, state._replace(reward=jnp.float32(0.0)), new)

    def _play(self, state: State, move: jax.Array) -> State:
        board = self.rules.play(state.board, move)
        moves = self.rules.legal(board)
        over = ~moves.any()
        after = self.rules.cards_left(board)
        won = over & self.rules.won(board)
        reward = self._rewards[
            won.astype(jnp.int32), jnp.clip(state.cards_left - after, 0, self.rules.pack_size)
        ]
        return state._replace(board=board, legal_action_mask=self._with_end(moves, jnp.bool_(False)),
                              reward=reward, terminated=over, won=won, illegal=jnp.bool_(False),
                              cards_left=after)  # fmt: skip

    def _illegal(self, state: State) -> State:
        mode = self.illegal_action
        if mode == "raise":  # nothing changes; the caller raises (a Python branch on a setting)
            return state._replace(illegal=jnp.bool_(True), reward=jnp.float32(0.0))
        bad = state._replace(illegal=jnp.bool_(True), won=jnp.bool_(False),
                             reward=jnp.float32(-self.illegal_penalty))  # fmt: skip
        if mode == "end":
            bad = bad._replace(terminated=jnp.bool_(True),
                               legal_action_mask=jnp.zeros_like(state.legal_action_mask))  # fmt: skip
        return bad


def _pick(condition: jax.Array, a: State, b: State) -> State:
    """``a`` where ``condition`` holds, else ``b``, leaf by leaf (no Python branch on a traced value)."""
    return jax.tree_util.tree_map(lambda x, y: jnp.where(condition, x, y), a, b)


def pack_indices(decks: Any, pack: tuple[int, ...]) -> np.ndarray:
    """Decks of card numbers (``quadrat_env.cards``) as the pack indices the JAX rules deal; each
    deck (the last axis) must hold every card of ``pack`` once, else ``ValueError``."""
    cards = np.asarray(decks)
    if cards.dtype.kind not in "iu" or cards.ndim == 0:
        raise ValueError(
            f"decks must be whole card numbers, a deck a row; got {cards.dtype} of shape {cards.shape}"
        )
    foreign = np.setdiff1d(cards, pack)
    if foreign.size:
        raise ValueError(
            f"card number(s) {foreign[:5].tolist()} are not in this game's {len(pack)}-card pack"
        )
    index = np.full(52, -1, dtype=np.int8)
    index[list(pack)] = np.arange(len(pack))
    out = index[cards.astype(np.int64)]
    check_indices(out, len(pack))
    return out


def check_indices(decks: np.ndarray, size: int) -> None:
    """``ValueError`` unless each deck (the last axis) holds the pack indices 0..size-1 once each."""
    if decks.dtype.kind not in "iu" or decks.ndim == 0 or decks.shape[-1] != size:
        raise ValueError(
            f"a deck must be {size} whole pack indices, got {decks.dtype} of shape {decks.shape}"
        )
    if not (np.sort(decks, axis=-1) == np.arange(size)).all():
        raise ValueError(
            f"a deck must hold each pack index 0..{size - 1} once; one repeats or leaves out an index"
        )
