"""The Gymnasium adapter shared by every game: reset, step, masks, rewards and input checks.

A game's environment subclasses ``PatienceEnv``, passes its ``Rules``
and supplies its pictures (``draw_text`` and ``draw_rgb``) and its docstring, the spec. Each reset and
step is one call of the game's compiled rules, which keep the state row, the observation and the mask
up to date in place; everything else (and every error message) is common.
"""

from __future__ import annotations

import copy
import importlib.util
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from quadrat_env.cards import card_code, parse_deck
from quadrat_env.core.checks import choice, is_seed, number, whole
from quadrat_env.core.kernel import (
    CFG_DENSE,
    CFG_END,
    CFG_ILLEGAL,
    CFG_LIMIT,
    CFG_PACK,
    CFG_SIZE,
    EP_CARDS,
    EP_ELAPSED,
    EP_ILLEGAL,
    EP_SIZE,
    EP_TERMINATED,
    EP_TRUNCATED,
    EP_WON,
)
from quadrat_env.core.rules import IllegalMove, Rules

REWARD_MODES = ("sparse", "dense")
_INT_TYPES = frozenset(
    {int, np.int64, np.int32, np.int16, np.int8, np.uint8, np.uint16, np.uint32, np.uint64}
)
#: What an illegal action does: "penalize" (-illegal_penalty, nothing changes), "end" (the same, and
#: the episode ends, lost: plain PPO learns legality fast this way), "raise" (IllegalMove).
ILLEGAL_MODES = ("penalize", "end", "raise")
#: Keyword arguments of the env itself (every backend's); the others an ID takes are its game's rule kwargs.
ENV_KWARGS = ("reward_mode", "illegal_action", "illegal_penalty", "max_episode_steps")


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError, AttributeError):  # e.g. blocked with sys.modules[name] = None
        return False


_HAS_PIL, _HAS_PYGAME = _installed("PIL"), _installed("pygame")
# Declared: what this installation can draw, so checkers that try every declared mode pass on a
# plain install. "human" is declared with Pillow even without pygame: gym.make then passes it to the
# env, which names the missing extra (undeclared, gym.make would wrap Gymnasium's own window).
RENDER_MODES = ["ansi"] + ["rgb_array", "human"] * _HAS_PIL
RESET_OPTIONS = ("deck",)


class PatienceEnv(gym.Env[np.ndarray, np.int64]):
    #: The modes this installation can draw: pictures need Pillow, the window pygame (extras), so
    #: checkers that try every declared mode do not fail on a plain install.
    metadata: ClassVar[dict[str, Any]] = {"render_modes": RENDER_MODES, "render_fps": 4}
    #: Whether the action space ends with an "end the game" action for deals with no move.
    has_end_action: ClassVar[bool] = True

    def __init__(
        self,
        game: Rules[Any],
        *,
        render_mode: str | None = None,
        reward_mode: str = "sparse",
        illegal_action: str = "penalize",
        illegal_penalty: float = 0.01,
        max_episode_steps: int | None = None,
    ) -> None:
        _check_extras(render_mode)
        choice("render_mode", render_mode, (None, *self.metadata["render_modes"]))
        choice("reward_mode", reward_mode, REWARD_MODES)
        choice("illegal_action", illegal_action, ILLEGAL_MODES)
        self.illegal_penalty = number("illegal_penalty", illegal_penalty, minimum=0)
        # The env counts its own steps as well as gym.make's TimeLimit: a reset that is refused
        # leaves this counter as it was (TimeLimit zeroes its own before the env can refuse).
        self.max_episode_steps = None if max_episode_steps is None else whole(
            "max_episode_steps", max_episode_steps, minimum=1)  # fmt: skip
        self.game = game
        self.render_mode = render_mode
        self.reward_mode = reward_mode
        self.illegal_action = illegal_action
        self.end_action: int | None = game.num_moves if self.has_end_action else None
        self.action_space = spaces.Discrete(game.num_moves + int(self.has_end_action))
        self.observation_space = spaces.Box(0.0, 1.0, (game.layout.size,), np.float32)
        self._window: Any = None  # the pygame window of render_mode="human", opened on first use
        self._dealt: tuple[int, ...] = ()
        self._n_actions = int(self.action_space.n)
        # The compiled rules update these in place: the state row, observation, mask and the
        # episode's bookkeeping (steps, ended, won, illegal, cards left: kernel.EP_*).
        self._row = np.zeros(game.state_size, dtype=np.int64)
        self._obs = np.zeros(game.layout.size, dtype=np.float32)
        self._mask = np.zeros(self._n_actions, dtype=np.int8)
        self._ep = np.zeros(EP_SIZE, dtype=np.int64)
        #: What the compiled per-row step reads (illegal mode, end action, limit, rewards); the
        #: batched env steps its rows with its single env's settings.
        self.step_cfg = step_settings(self)
        self._started = False

    # -- what a subclass supplies ------------------------------------------------------------
    def draw_text(self, state: Any) -> str:
        """The ``ansi`` picture of a (readable) state."""
        raise NotImplementedError

    def draw_rgb(self, state: Any) -> np.ndarray:
        """The ``rgb_array`` picture of a (readable) state."""
        raise NotImplementedError

    @property
    def elapsed_steps(self) -> int:
        """Steps since the last reset (what the env's own time limit counts)."""
        return int(self._ep[EP_ELAPSED])

    @property
    def state(self) -> Any:
        """The rules' readable state (None before the first reset)."""
        return self.game.view(self._row) if self._started else None

    # -- Gymnasium API -------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        # Check everything before touching the RNG or the state, so bad input changes nothing.
        if not is_seed(seed):  # as the batched env: numpy integers are seeds, bools are not
            raise ValueError(f"seed must be None or a whole number >= 0, got {seed!r}")
        deck = check_options(options, RESET_OPTIONS, self.game).get("deck")
        super().reset(seed=None if seed is None else int(seed))
        if deck is None:
            deck = tuple(self.np_random.permutation(self.game.pack).tolist())
        if not self.game.kernel.start(self._row, np.array(deck, dtype=np.int64), self._obs, self._mask,
                                      self.game.params, self._ep, self.step_cfg):  # fmt: skip
            raise AssertionError(f"{self.game.name} dealt a start with no legal move")
        self._dealt = deck
        self._started = True
        if self.render_mode == "human":
            self.render()
        return self._obs.copy(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        # Plain ints and numpy integers in range take the fast path; anything else goes through
        # the space's own check (and its error message below). Bools are not actions.
        if (
            type(action) in _INT_TYPES
            and 0 <= action < self._n_actions
            or (not isinstance(action, (bool, np.bool_)) and self.action_space.contains(action))
        ):
            a = int(action)
        else:
            raise ValueError(
                f"action {action!r} is outside the action space {self.action_space} "
                f"(expected an integer 0..{self.action_space.n - 1})"
            )
        if not self._started:
            raise RuntimeError("step() called before reset(); call reset() first")
        ep = self._ep
        if ep[EP_TERMINATED]:
            raise RuntimeError("step() called after the episode ended; call reset() first")
        reward = self.game.kernel.act(self._row, a, self._obs, self._mask, self.game.params, ep,
                                      self.step_cfg, self.illegal_penalty)  # fmt: skip
        if ep[EP_ILLEGAL] and self.illegal_action == "raise":  # nothing was changed
            raise IllegalMove(
                f"{self.game.name}: action {a} is not legal now; legal actions: "
                f"{np.flatnonzero(self._mask).tolist()}"
            )
        if self.render_mode == "human":
            self.render()
        return self._obs.copy(), reward, bool(ep[EP_TERMINATED]), bool(ep[EP_TRUNCATED]), self._info()

    def __copy__(self) -> PatienceEnv:
        """A copy that shares nothing mutable (stepping one never changes the other). Gymnasium's
        wrappers copy shallowly, so copy a wrapped env with ``copy.deepcopy`` or pickle."""
        window, self._window = self._window, None
        try:
            return copy.deepcopy(self)
        finally:
            self._window = window

    def action_masks(self) -> np.ndarray:
        """Legal actions as a bool array (sb3-contrib's MaskablePPO calls this)."""
        return self._mask.astype(bool)

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gym.logger.warn(
                "render() called without a render_mode; pass render_mode='ansi' or 'rgb_array' to gym.make"
            )
            return None
        if not self._started:
            raise RuntimeError("render() called before reset(); call reset() first")
        if self.render_mode == "rgb_array":
            return self.draw_rgb(self.state)
        if self.render_mode == "human":
            if self._window is None:
                from quadrat_env.core.render import Window

                self._window = Window(self.game.name, self.metadata["render_fps"])
            self._window.show(self.draw_rgb(self.state))
            return None
        return self.draw_text(self.state)

    def close(self) -> None:
        if self._window is not None:
            self._window.close()
            self._window = None
        super().close()

    # -- helpers -------------------------------------------------------------------------------
    @property
    def deck(self) -> tuple[str, ...]:
        """The current deal as card codes, for ``reset(options={"deck": env.deck})`` replays."""
        return tuple(card_code(c) for c in self._dealt)

    def _info(self) -> dict[str, Any]:
        # Every key is always present (Monitor's info_keywords and vector envs want fixed keys);
        # "won" is True only in the step that ends a won game.
        ep = self._ep
        return {
            "action_mask": self._mask.copy(),
            "cards_left": int(ep[EP_CARDS]),
            "illegal_action": bool(ep[EP_ILLEGAL]),
            "won": bool(ep[EP_WON]),
        }


def _check_extras(render_mode: Any) -> None:
    """A picture mode without its packages: one clear error naming the extra to install."""
    from quadrat_env.extras import needs

    if render_mode in ("rgb_array", "human") and not _HAS_PIL:
        extra = "render" if render_mode == "rgb_array" else "human"
        raise needs(extra, "Pillow", f"render_mode={render_mode!r}")
    if render_mode == "human" and not _HAS_PYGAME:
        raise needs("human", "pygame", "render_mode='human'")


def step_settings(env: PatienceEnv) -> np.ndarray:
    """The settings row the compiled per-row step reads (``kernel.CFG_*``), from an env's kwargs."""
    cfg = np.zeros(CFG_SIZE, dtype=np.int64)
    cfg[CFG_ILLEGAL] = ILLEGAL_MODES.index(env.illegal_action)
    cfg[CFG_END] = -1 if env.end_action is None else env.end_action
    cfg[CFG_LIMIT] = env.max_episode_steps or 0
    cfg[CFG_DENSE] = env.reward_mode == "dense"
    cfg[CFG_PACK] = env.game.pack_size
    return cfg


def check_options(options: Mapping[str, Any] | None, known: tuple[str, ...], game: Rules[Any],
                  num_envs: int = 1) -> dict[str, Any]:  # fmt: skip
    """Reset options checked, with every deck parsed (card numbers): what both envs accept.

    ``"deck"``: one deck; ``"decks"``: one deck or None per env (``num_envs`` of them);
    ``"reset_mask"``: a bool array of shape (num_envs,) with a True. Raises ``ValueError`` naming
    the problem; nothing is changed.
    """
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ValueError(f"options must be a dict, got {type(options).__name__}")
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"unknown reset option(s) {unknown}; known: {list(known)}")
    out = {k: v for k, v in options.items() if v is not None}
    if "deck" in out and "decks" in out:
        raise ValueError("give options['deck'] (one for all) or options['decks'] (one per env), not both")
    if "deck" in out:
        out["deck"] = _parse(out["deck"], game, "")
    if "decks" in out:
        decks = out["decks"]
        if isinstance(decks, (str, bytes)) or not isinstance(decks, Sequence) or len(decks) != num_envs:
            raise ValueError(f"options['decks'] must be a list of {num_envs} decks (or None entries)")
        out["decks"] = [None if d is None else _parse(d, game, f" for env {i}") for i, d in enumerate(decks)]
    if "reset_mask" in out:
        mask = np.asarray(out["reset_mask"])
        if mask.dtype != np.bool_ or mask.shape != (num_envs,) or not mask.any():
            raise ValueError(f"options['reset_mask'] must be a bool array of shape ({num_envs},) "
                             f"with a True, got {mask!r}")  # fmt: skip
        out["reset_mask"] = mask
    return out


def _parse(deck: Any, game: Rules[Any], where: str) -> tuple[int, ...]:
    try:
        return parse_deck(deck, game.pack)
    except ValueError as err:
        raise ValueError(f"{game.name}: bad deck{where}: {err}") from None
