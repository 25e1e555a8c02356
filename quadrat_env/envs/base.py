"""The Gymnasium adapter shared by every game: reset, step, masks, rewards and input checks.

A game's environment subclasses :class:`PatienceEnv` and supplies the rules object, the observation
encoding and the text picture; everything else (and every error message) is common.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from quadrat_env.cards import PACKS, card_code, parse_deck
from quadrat_env.rules.base import Game, IllegalMove

REWARD_MODES = ("sparse", "dense")
_INT_TYPES = frozenset(
    {int, np.int64, np.int32, np.int16, np.int8, np.uint8, np.uint16, np.uint32, np.uint64}
)
ILLEGAL_MODES = ("penalize", "raise")
RESET_OPTIONS = ("deck",)


class PatienceEnv(gym.Env[np.ndarray, np.int64]):
    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 4}
    #: Whether the action space ends with an "end the game" action for deals with no move.
    has_end_action: ClassVar[bool] = True

    def __init__(
        self,
        game: Game[Any],
        obs_size: int,
        *,
        render_mode: str | None = None,
        reward_mode: str = "sparse",
        illegal_action: str = "penalize",
        illegal_penalty: float = 0.01,
    ) -> None:
        _check_choice("render_mode", render_mode, (None, *self.metadata["render_modes"]))
        _check_choice("reward_mode", reward_mode, REWARD_MODES)
        _check_choice("illegal_action", illegal_action, ILLEGAL_MODES)
        if isinstance(illegal_penalty, bool) or not isinstance(illegal_penalty, (int, float)):
            raise ValueError(f"illegal_penalty must be a number, got {illegal_penalty!r}")
        if not (np.isfinite(illegal_penalty) and illegal_penalty >= 0):
            raise ValueError(f"illegal_penalty must be finite and >= 0, got {illegal_penalty!r}")
        self.game = game
        self.render_mode = render_mode
        self.reward_mode = reward_mode
        self.illegal_action = illegal_action
        self.illegal_penalty = float(illegal_penalty)
        self.end_action: int | None = game.num_moves if self.has_end_action else None
        self.action_space = spaces.Discrete(game.num_moves + int(self.has_end_action))
        self.observation_space = spaces.Box(0.0, 1.0, (obs_size,), np.float32)
        self.state: Any = None
        self._window: Any = None  # the pygame window of render_mode="human", opened on first use
        self._dealt: tuple[int, ...] = ()
        self._n_actions = int(self.action_space.n)
        # Masks are shared read-only arrays, one per set of legal moves (never written in place).
        self._masks: dict[tuple[int, ...], np.ndarray] = {}
        self._mask = self._mask_of(())
        self._obs = np.zeros(obs_size, dtype=np.float32)
        self._over = False

    # -- what a subclass supplies ------------------------------------------------------------
    def _observe(self, state: Any) -> np.ndarray:
        raise NotImplementedError

    def _render_text(self, state: Any) -> str:
        raise NotImplementedError

    def _render_rgb(self, state: Any) -> np.ndarray:
        raise NotImplementedError

    def _observe_move(self, before: Any, after: Any) -> np.ndarray:
        """The observation after a move from ``before``; a subclass may update it in place."""
        return self._observe(after)

    # -- Gymnasium API -------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        # Check everything before touching the RNG or the state, so bad input changes nothing.
        deck = self._deck_from_options(options)
        super().reset(seed=seed)
        if deck is None:
            deck = tuple(self.np_random.permutation(PACKS[self.game.pack_size]).tolist())
        self.state = self.game.start(deck)
        self._dealt = deck
        self._over = False
        self._obs = self._observe(self.state)
        self._set_mask(self.game.legal_moves(self.state), dead_start=True)
        if self.render_mode == "human":
            self.render()
        return self._obs.copy(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        # Plain ints and numpy integers in range take the fast path; anything else goes through
        # the space's own check (and its error message below).
        if type(action) in _INT_TYPES and 0 <= action < self._n_actions or self.action_space.contains(action):
            a = int(action)
        else:
            raise ValueError(
                f"action {action!r} is outside the action space {self.action_space} "
                f"(expected an integer 0..{self.action_space.n - 1})"
            )
        if self.state is None:
            raise RuntimeError("step() called before reset(); call reset() first")
        if self._over:
            raise RuntimeError("step() called after the episode ended; call reset() first")
        if not self._mask[a]:
            if self.illegal_action == "raise":
                raise IllegalMove(
                    f"{self.game.name}: action {a} is not legal now; legal actions: "
                    f"{np.flatnonzero(self._mask).tolist()}"
                )
            info = self._info()
            info["illegal_action"] = True
            return self._obs.copy(), -self.illegal_penalty, False, False, info
        if a == self.end_action:
            self._over = True
            self._mask = self._mask_of(())
            return self._obs.copy(), 0.0, True, False, self._info()
        dense = self.reward_mode == "dense"
        cards_before = self.game.cards_left(self.state) if dense else 0  # only dense rewards need it
        before = self.state
        self.state = self.game.play_unchecked(before, a)  # the mask already said it is legal
        legal = self.game.legal_moves(self.state)
        self._over = not legal
        self._obs = self._observe_move(before, self.state)
        self._set_mask(legal, dead_start=False)
        reward = 0.0
        if dense:
            reward += (cards_before - self.game.cards_left(self.state)) / self.game.pack_size
        if self._over and self.game.is_won(self.state):
            reward += 1.0
        if self.render_mode == "human":
            self.render()
        return self._obs.copy(), reward, self._over, False, self._info()

    def action_masks(self) -> np.ndarray:
        """Legal actions as a bool array (sb3-contrib's MaskablePPO calls this)."""
        return self._mask.astype(bool)

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gym.logger.warn(
                "render() called without a render_mode; pass render_mode='ansi' or 'rgb_array' to gym.make"
            )
            return None
        if self.state is None:
            raise RuntimeError("render() called before reset(); call reset() first")
        if self.render_mode == "rgb_array":
            return self._render_rgb(self.state)
        if self.render_mode == "human":
            if self._window is None:
                from quadrat_env.render import Window

                self._window = Window(self.game.name, self.metadata["render_fps"])
            self._window.show(self._render_rgb(self.state))
            return None
        return self._render_text(self.state)

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

    def _set_mask(self, legal: tuple[int, ...], dead_start: bool) -> None:
        if dead_start and not legal:
            if self.end_action is None:  # no game without an end action can open with no move
                raise AssertionError(f"{self.game.name} dealt a start with no legal move")
            legal = (self.end_action,)
        self._mask = self._mask_of(legal)

    def _mask_of(self, legal: tuple[int, ...]) -> np.ndarray:
        mask = self._masks.get(legal)
        if mask is None:
            mask = np.zeros(self._n_actions, dtype=np.int8)
            mask[list(legal)] = 1
            mask.flags.writeable = False
            self._masks[legal] = mask
        return mask

    def _info(self) -> dict[str, Any]:
        # Every key is always present (Monitor's info_keywords and vector envs want fixed keys);
        # "won" is True only in the step that ends a won game.
        return {
            "action_mask": self._mask.copy(),
            "cards_left": self.game.cards_left(self.state),
            "illegal_action": False,
            "won": self._over and self.game.is_won(self.state),
        }

    def _deck_from_options(self, options: Mapping[str, Any] | None) -> tuple[int, ...] | None:
        if options is None:
            return None
        if not isinstance(options, Mapping):
            raise ValueError(f"options must be a dict, got {type(options).__name__}")
        unknown = sorted(set(options) - set(RESET_OPTIONS))
        if unknown:
            raise ValueError(f"unknown reset option(s) {unknown}; known: {list(RESET_OPTIONS)}")
        if options.get("deck") is None:
            return None
        try:
            return parse_deck(options["deck"], self.game.pack_size)
        except ValueError as err:
            raise ValueError(f"{self.game.name}: bad deck: {err}") from None


def _check_choice(name: str, value: Any, choices: tuple[Any, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
