"""The afterstate TD(0) learner of ``quadrat_env.experiments.td``: its state and its steps.

Everything the run depends on is an attribute of ``Learner`` that a checkpoint stores (the
network and optimiser, the batched env's state, the exploration generator, the afterstates waiting
for their targets), so a resumed run continues exactly where the checkpoint was taken.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from quadrat_env.agents.evaluate import evaluate
from quadrat_env.agents.networks import afterstate_model, afterstate_names, extractor, scores_afterstates
from quadrat_env.agents.sb3_agent import SB3Agent
from quadrat_env.experiments.common import checkpoint

from quadrat_env import seeds
from quadrat_env.core.checks import check_memory

#: Address space a td run reserves after its memory check, beyond its envs and buffers: compiling
#: the rules (numba, LLVM) and torch's threads (a stack and a heap each). Measured from the check to
#: the run's peak (VmPeak - VmSize) with 2,000 moves: 460 MiB on Zudecken32, 604 MiB on Zudecken.
STARTING = 640 * 2**20

#: The learning curve's columns (``curve.csv``).
FIELDS = ("moves", "seconds", "deals", "win_rate", "ci_low", "ci_high")


class Learner:
    """One TD run in progress (``settings``: ``quadrat_env.experiments.td.Settings``)."""

    def __init__(self, settings: Any) -> None:
        self.check_network(settings)
        torch.set_num_threads(1)  # batches of a few thousand afterstates: one core each run
        self.settings = settings
        self.model = afterstate_model(settings.env_id, settings.seed, settings.features,
                                      settings.features_kwargs, settings.env_kwargs)  # fmt: skip
        self.net = self.model.policy.features_extractor
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=settings.learning_rate)
        self.venv = gym.make_vec(
            settings.env_id,
            num_envs=settings.n_envs,
            vectorization_mode="vector_entry_point",
            autoreset_mode=AutoresetMode.SAME_STEP,
            **settings.env_kwargs,
        ).unwrapped
        self.obs, _ = self.venv.reset(seed=list(settings.env_seeds()))
        self.masks = self.venv.action_masks()
        self.rng = np.random.default_rng(settings.seed)
        shape = (settings.n_envs, *self._afterstate_shape())
        # the last move's afterstates, waiting for the next decision's values as their targets
        self.pend_x, self.pend_r = np.zeros(shape, np.float32), np.zeros(settings.n_envs, np.float32)
        self.pend_ok, self.pend_done = np.zeros(settings.n_envs, bool), np.zeros(settings.n_envs, bool)
        self.buf_x, self.buf_y = np.zeros((0, *shape[1:]), np.float32), np.zeros(0, np.float32)
        self.moves, self.updates, self.deals, self.wins, self.next_eval = 0, 0, 0, 0, 0
        self.seconds, self.loss = 0.0, float("nan")
        self.curve: list[tuple] = []
        self._since = time.perf_counter()

    @staticmethod
    def check_network(settings: Any) -> None:
        if not scores_afterstates(extractor(settings.features)):
            raise ValueError(f"features {settings.features!r} is not an afterstate network (one with "
                             "scored_moves, afterstates and value): choose one of "
                             f"{afterstate_names()}")  # fmt: skip

    @staticmethod
    def check_buildable(settings: Any) -> None:
        """The env, the network and the validation deals the settings name can be made: else one
        ``ValueError`` naming the setting, before any work."""
        try:
            env = gym.make(settings.env_id, **settings.env_kwargs)
        except (TypeError, ValueError) as err:
            raise ValueError(f"env_kwargs {settings.env_kwargs!r}: {err}") from None
        try:
            extractor(settings.features)(env.observation_space, **settings.features_kwargs)
        except (TypeError, ValueError) as err:
            raise ValueError(f"features_kwargs {settings.features_kwargs!r}: {err}") from None
        try:
            seeds.VALIDATION.take(settings.eval_deals)
        except ValueError as err:
            raise ValueError(f"eval_deals {settings.eval_deals:,}: {err}") from None

    @staticmethod
    def check_memory(settings: Any) -> None:
        """Refuse settings whose envs and buffers would not fit in the memory available now, before
        any work. An estimate per env: the batched env's rows, deck queue and observation copies,
        and the pending and buffered afterstates (each at most an observation's size here)."""
        env = gym.make(settings.env_id, **settings.env_kwargs).unwrapped
        obs, game = env.observation_space.shape[0], env.game
        per_env = 8 * game.state_size + 48 * obs + 64 * game.pack_size
        need = settings.n_envs * per_env + (settings.batch_size + settings.n_envs) * 12 * (obs + 1)
        check_memory(need, f"n_envs {settings.n_envs:,} with batch_size {settings.batch_size:,}",
                     "lower --n-envs (or batch_size in the YAML)", reserves=STARTING)  # fmt: skip

    def _afterstate_shape(self) -> tuple[int, ...]:
        obs = torch.from_numpy(self.obs[:1])
        rows, moves = torch.nonzero(torch.ones_like(self.net.scored_moves(obs)), as_tuple=True)
        return tuple(self.net.afterstates(obs, rows[:1], moves[:1]).shape[1:])

    def _linear(self, start: float, end: float) -> float:
        """From ``start`` at the first move to ``end`` at the run's last, linearly."""
        return start + (end - start) * min(1.0, self.moves / self.settings.n_moves)

    def epsilon(self) -> float:
        return self._linear(self.settings.epsilon_start, self.settings.epsilon_end)

    def play_until_update(self) -> int:
        """Play batched moves until a batch of targets is ready, then one gradient step; the moves made."""
        before = self.moves
        while len(self.buf_y) < self.settings.batch_size:
            self._step()
        self._update()
        return self.moves - before

    def _step(self) -> None:
        """One move on every deal: targets for the last move's afterstates, then the next move."""
        obs = torch.from_numpy(self.obs)
        masks = torch.from_numpy(np.asarray(self.masks, bool))
        with torch.no_grad():
            scores = self.net(obs).masked_fill(~masks, -torch.inf)
            scored = self.net.scored_moves(obs)
        best, value = scores.argmax(1).numpy(), torch.sigmoid(scores.amax(1)).numpy()
        target = np.where(self.pend_done, self.pend_r, value)  # the deal's end, or the next decision's value
        self.buf_x = np.concatenate([self.buf_x, self.pend_x[self.pend_ok]])
        self.buf_y = np.concatenate([self.buf_y, target[self.pend_ok].astype(np.float32)])
        actions = self._explore(best, masks.numpy())
        rows = np.arange(len(actions))
        ok = scored.numpy()[rows, actions]
        with torch.no_grad():
            x = self.net.afterstates(obs, torch.from_numpy(rows[ok]), torch.from_numpy(actions[ok]))
        self.obs, reward, terminated, truncated, info = self.venv.step(actions)
        self.masks = self.venv.action_masks()
        self.pend_x[ok] = x.numpy()
        self.pend_ok = ok & (terminated | ~truncated)  # a cut-off deal has no target: dropped
        self.pend_r, self.pend_done = reward.astype(np.float32), terminated
        self.moves += len(actions)
        self.deals += int(terminated.sum())
        # same-step autoreset: info describes the new deals, the ended ones' info is its final_info
        ended = info.get("final_info", info)
        self.wins += int(np.asarray(ended["won"])[terminated].sum()) if "won" in ended else 0

    def _explore(self, best: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``best``, with a uniformly random legal move instead on a share ``epsilon`` of the deals."""
        actions = best.copy()
        explore = np.flatnonzero(self.rng.random(len(best)) < self.epsilon())
        if len(explore):
            actions[explore] = (self.rng.random((len(explore), masks.shape[1])) * masks[explore]).argmax(1)
        return actions

    def _update(self) -> None:
        n = self.settings.batch_size
        x, y = torch.from_numpy(self.buf_x[:n]), torch.from_numpy(self.buf_y[:n])
        loss = torch.nn.functional.binary_cross_entropy_with_logits(self.net.value(x), y)
        for group in self.optimizer.param_groups:  # smaller steps late in the run, when targets are better
            group["lr"] = self._linear(self.settings.learning_rate, self.settings.learning_rate_end)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.buf_x, self.buf_y = self.buf_x[n:], self.buf_y[n:]
        self.updates, self.loss = self.updates + 1, loss.item()

    def eval_due(self) -> bool:
        return self.moves >= self.next_eval

    def evaluate(self) -> list[tuple]:
        """Play the validation deals greedily on the scores; the curve with the new point."""
        deals = seeds.VALIDATION.take(self.settings.eval_deals)
        agent = SB3Agent(self.model, "td", masked=True)
        summary, _ = evaluate(self.settings.env_id, agent, deals, self.settings.env_kwargs, progress=False,
                              n_envs=min(1024, len(deals)))  # fmt: skip
        self.curve.append((self.moves, round(self.elapsed(), 1), summary.episodes, round(summary.win_rate, 5),
                           round(summary.ci_low, 5), round(summary.ci_high, 5)))  # fmt: skip
        self.next_eval = self.moves + self.settings.eval_every
        return self.curve

    def elapsed(self) -> float:
        """Seconds of the whole run, over every resumed part."""
        return self.seconds + time.perf_counter() - self._since

    def summary(self) -> dict[str, Any]:
        seconds = self.elapsed()
        return {"method": self.settings.method, "moves": self.moves, "updates": self.updates,
                "seconds": round(seconds, 1), "moves_per_second": round(self.moves / max(seconds, 1e-9)),
                "training_deals": self.deals, "training_win_rate": round(self.wins / max(self.deals, 1), 5),
                "val_win_rate": self.curve[-1][3] if self.curve else None}  # fmt: skip

    @contextlib.contextmanager
    def progress_bar(self, enabled: bool) -> Iterator[Any]:
        from tqdm.auto import tqdm

        with tqdm(total=self.settings.n_moves, initial=self.moves, unit="move", unit_scale=True,
                  desc=f"td {self.settings.env_id}", disable=not enabled) as bar:  # fmt: skip
            yield bar

    # -- checkpoints --------------------------------------------------------------------------------
    def snapshot(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        arrays: dict[str, np.ndarray] = {}
        for key, value in self.model.policy.state_dict().items():
            arrays[f"policy/{key}"] = value.detach().cpu().numpy()
        optimizer = self.optimizer.state_dict()
        for i, state in optimizer["state"].items():
            for key, value in state.items():
                arrays[f"adam/{i}/{key}"] = value.detach().cpu().numpy()
        self.seconds, self._since = self.elapsed(), time.perf_counter()
        meta = {"td": checkpoint.capture(self, arrays, "td", skip=("settings", "_since")),
                "env": checkpoint.capture(self.venv, arrays, "env"),
                "adam_groups": optimizer["param_groups"],
                "adam_state": sorted(optimizer["state"])}  # fmt: skip
        return meta, arrays

    def restore(self, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        try:
            policy = {k.removeprefix("policy/"): torch.from_numpy(v.copy()) for k, v in arrays.items()
                      if k.startswith("policy/")}  # fmt: skip
            self.model.policy.load_state_dict(policy)
            state = {i: {k.rsplit("/", 1)[1]: torch.from_numpy(v.copy()) for k, v in arrays.items()
                         if k.startswith(f"adam/{i}/")} for i in meta["adam_state"]}  # fmt: skip
            self.optimizer.load_state_dict({"state": state, "param_groups": meta["adam_groups"]})
            checkpoint.restore(self, meta["td"], arrays)
            checkpoint.restore(self.venv, meta["env"], arrays)
        except checkpoint.CheckpointError:
            raise
        except (KeyError, TypeError, ValueError, RuntimeError) as err:  # a crafted file, checksum and all
            raise checkpoint.CheckpointError(
                f"not a td checkpoint of these settings ({type(err).__name__})"
            ) from None
        self._check_counts()
        self.curve = [tuple(row) for row in self.curve]
        self._since = time.perf_counter()

    def _check_counts(self) -> None:
        """The restored counts within what the settings allow: a file whose checksum was recomputed
        cannot claim a finished run it never made."""
        most = self.settings.n_moves + self.settings.n_envs  # the last step may pass n_moves
        counts = {"moves": (self.moves, most), "deals": (self.deals, self.moves),
                  "wins": (self.wins, self.deals), "updates": (self.updates, self.moves)}  # fmt: skip
        for name, (value, top) in counts.items():
            if not 0 <= value <= top:
                raise checkpoint.CheckpointError(f"the checkpoint's {name} {value:,} is not in 0..{top:,}: "
                                                 "not a checkpoint of these settings")  # fmt: skip
        if not (
            0 <= self.seconds < 1e9 and all(isinstance(r, (list, tuple)) and len(r) == 6 for r in self.curve)
        ):
            raise checkpoint.CheckpointError("the checkpoint's seconds or curve are not a run's")
