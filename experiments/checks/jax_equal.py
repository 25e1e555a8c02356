"""Play every ID's JAX rules beside its compiled rules on the same decks and check every step.

    python -m quadrat_env.experiments.checks.jax_equal --deals 10000        # every ID, random and greedy play

For each deck both backends start from the same deal; at every step the observation (float32, bit
for bit), the legal-action mask, the reward (float32), termination, the win flag and the cards left
must agree, and each backend picks its move from its own mask by the same policy, so the move logs
must agree too. Random play picks the ``floor(u * legal)``-th legal move for a shared uniform ``u``;
greedy play is the game's greedy rule (``Rules.greedy_batch``). The compiled side is the native
batched env; the JAX side is ``quadrat_env.functional`` under ``jit(vmap(step))``.
Writes ``<out>/jax_equal.json`` (and prints a line a game).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import quadrat_env
from quadrat_env.arguments import at_least, description_of
from quadrat_env.extras import command
from quadrat_env.files import atomic_write

POLICIES = ("random", "greedy")
FIELDS = ("observation", "mask", "reward", "terminated", "won", "cards_left", "move")


def _policy(name: str, game: Any, masks: np.ndarray, u: np.ndarray) -> np.ndarray:
    if name == "greedy":
        return game.greedy_batch(masks)
    legal = masks.astype(bool)
    nth = np.floor(u * legal.sum(axis=1).astype(np.float32)).astype(np.int64)
    return np.argmax(np.cumsum(legal, axis=1) > nth[:, None], axis=1)


def _wrong(field: str, compiled: Any, jax_side: Any, alive: np.ndarray) -> np.ndarray:
    """The live deals where the two backends disagree on ``field`` (rewards compared as float32)."""
    c, j = np.asarray(compiled), np.asarray(jax_side)
    c = c.astype(np.float32) if field == "reward" else c
    return (c != j.astype(c.dtype)).reshape(len(alive), -1).any(axis=1) & alive


def compare(env_id: str, decks: np.ndarray, policy: str, seed: int = 0, **kwargs: Any) -> dict[str, Any]:
    """Play ``decks`` (card numbers, one row a deal) on both backends, made with ``kwargs``; the
    steps compared, the disagreements per field (all zero when the backends agree) and the first."""
    import jax

    from quadrat_env.core.jax_core import pack_indices
    from quadrat_env.functional import make

    n = len(decks)
    venv = gym.make_vec(env_id, num_envs=n, **kwargs)
    core = make(env_id, max_episode_steps=None, **kwargs)
    game = venv.unwrapped.game
    obs, info = venv.reset(options={"decks": [tuple(d) for d in decks]})
    state = jax.jit(jax.vmap(core.init_deck))(pack_indices(decks, game.pack))
    step, observe = jax.jit(jax.vmap(core.step)), jax.jit(jax.vmap(core.observe))
    rng = np.random.default_rng(seed)
    alive, steps = np.ones(n, dtype=bool), 0
    bad, first = dict.fromkeys(FIELDS, 0), None

    def check(results: dict[str, tuple[Any, Any]]) -> None:
        nonlocal first
        for field, (c, j) in results.items():
            wrong = _wrong(field, c, j, alive)
            bad[field] += int(wrong.sum())
            if first is None and wrong.any():
                first = {"field": field, "deal": int(np.argmax(wrong)), "step": steps}

    mask = info["action_mask"]
    check({"observation": (obs, observe(state)), "mask": (mask, state.legal_action_mask)})
    while alive.any() and steps < n * 2000:  # every game ends (at most 210 moves): a guard
        u = rng.random(n, dtype=np.float32)
        moves = _policy(policy, game, mask, u)
        moves_jax = _policy(policy, game, np.asarray(state.legal_action_mask, dtype=np.int8), u)
        check({"move": (moves, moves_jax)})
        obs, reward, terminated, _, info = venv.step(moves)
        state = step(state, moves_jax)
        # a finished env of the batched env offers every action (its next one is ignored): the
        # single env's mask of a finished game, none, is the one compared
        mask = np.where(terminated[:, None], 0, info["action_mask"])
        check({"observation": (obs, observe(state)), "mask": (mask, state.legal_action_mask),
               "reward": (reward, state.reward), "terminated": (terminated, state.terminated),
               "won": (info["won"], state.won),
               "cards_left": (info["cards_left"], state.cards_left)})  # fmt: skip
        steps += int(alive.sum())
        alive &= ~np.asarray(terminated)
    venv.close()
    return {"env_id": env_id, "policy": policy, "deals": n, "steps": steps, "disagreements": bad,
            "first": first}  # fmt: skip


def check_all(deals: int, seed: int, chunk: int, env_ids: tuple[str, ...]) -> list[dict[str, Any]]:
    """``compare`` for every ID and policy on ``deals`` decks a game (drawn from ``seed``), in chunks."""
    from quadrat_env.registry import rules_for

    rows = []
    for env_id in env_ids:
        pack = np.array(rules_for(env_id).pack)
        rng = np.random.default_rng(seed)
        decks = np.stack([rng.permutation(pack) for _ in range(deals)])
        for policy in POLICIES:
            start, total = time.perf_counter(), None
            for at in range(0, deals, chunk):
                part = compare(env_id, decks[at : at + chunk], policy, seed=seed + at)
                total = part if total is None else _merge(total, part)
            assert total is not None
            total["seconds"] = round(time.perf_counter() - start, 1)
            rows.append(total)
            wrong = sum(total["disagreements"].values())
            print(f"{env_id} {policy}: {total['deals']:,} deals, {total['steps']:,} steps, "
                  f"{wrong} disagreement(s)", flush=True)  # fmt: skip
    return rows


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    bad = {k: a["disagreements"][k] + b["disagreements"][k] for k in FIELDS}
    return {**a, "deals": a["deals"] + b["deals"], "steps": a["steps"] + b["steps"], "disagreements": bad,
            "first": a["first"] or b["first"]}  # fmt: skip


@command
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=description_of(__doc__))
    p.add_argument("--deals", type=at_least(1), default=10_000, help="decks a game (default 10,000)")
    p.add_argument("--seed", type=at_least(0), default=0, help="the decks' generator seed")
    p.add_argument("--chunk", type=at_least(1), default=2_000, help="deals played at once")
    p.add_argument("--out", type=Path, default=None, help="write <out>/jax_equal.json")
    args = p.parse_args(argv)
    import jax

    rows = check_all(args.deals, args.seed, args.chunk, quadrat_env.ENV_IDS)
    wrong = sum(sum(r["disagreements"].values()) for r in rows)
    device = jax.devices()[0]
    command = "python -m quadrat_env.experiments.checks.jax_equal " + " ".join(argv or sys.argv[1:])
    summary = {"command": command,
               "jax": jax.__version__, "device": f"{device.platform}: {device.device_kind}", "results": rows,
               "disagreements": wrong}  # fmt: skip
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        atomic_write(args.out / "jax_equal.json", json.dumps(summary, indent=1) + "\n")
    steps = sum(r["steps"] for r in rows)
    print(f"{len(rows)} runs, {steps:,} steps compared: {wrong} disagreement(s)")
    return 0 if wrong == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
