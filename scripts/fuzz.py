"""Fuzz every ID as a hostile user would: hypothesis state machines for the single and batched envs.

    python -m scripts.fuzz --steps 1000000  # from the repository root; minutes per ID

Rules interleave resets (seeds, good decks, bad decks, bad options), legal, illegal and out-of-range
actions, copies and pickles. After every rule: a refused call changed nothing (observation, mask,
generator state, step count), the cards are conserved, and observations stay in their space.
``tests/env/test_fuzz.py`` runs the same machines briefly in the test suite.
"""

from __future__ import annotations

import argparse
import copy
import pickle
import sys
import time
from typing import Any

import gymnasium as gym
import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import quadrat_env
from quadrat_env.arguments import at_least
from quadrat_env.cards import card_code

IDS = quadrat_env.ENV_IDS
BAD_ACTIONS = st.one_of(st.integers(-5, -1), st.integers(13, 99), st.booleans(), st.floats(),
                        st.text(max_size=2), st.none(), st.just(np.array([1, 2])))  # fmt: skip
STATS = {"steps": 0, "episodes": 0, "inputs": 0, "refused": 0}


def bad_decks(pack: tuple[int, ...]) -> st.SearchStrategy[Any]:
    codes = [card_code(c) for c in pack]
    return st.one_of(
        st.just(codes[:-1]), st.just(codes[:-1] + codes[:1]), st.just(["XX"] * len(codes)),
        st.just(set(codes)), st.just(np.array(codes).reshape(4, -1)), st.integers(), st.just(""),
        st.just(codes + ["AC"]), st.just([True] * len(codes)),
    )  # fmt: skip


def refused(snapshot: Any, call: Any) -> None:
    """``call()`` must raise ValueError and leave ``snapshot()`` as it was."""
    before = snapshot()
    try:
        call()
    except ValueError:
        STATS["refused"] += 1
    else:
        raise AssertionError("a bad input was accepted")
    assert snapshot() == before, "a refused call changed the env"
    STATS["inputs"] += 1


class SingleEnvMachine(RuleBasedStateMachine):
    """One ``gym.make`` env of an ID drawn from ``ids``."""

    ids: tuple[str, ...] = IDS

    @initialize(data=st.data(), seed=st.integers(0, 2**31))
    def make(self, data: st.DataObject, seed: int) -> None:
        self.env = gym.make(data.draw(st.sampled_from(self.ids)))
        self.game = self.env.unwrapped.game
        self.rng = np.random.default_rng(seed)
        self.obs, self.info = self.env.reset(seed=seed)
        self.done, self.cards = False, self.info["cards_left"]
        STATS["episodes"] += 1

    def snapshot(self) -> tuple[Any, ...]:
        u = self.env.unwrapped
        # (gym.make's TimeLimit zeroes its own count before the env can refuse a reset; the env's
        # count, which truncates all the same, is the one that must not move)
        return u.state, u.action_masks().tobytes(), str(u.np_random.bit_generator.state), u.elapsed_steps

    def refused(self, call: Any) -> None:
        refused(self.snapshot, call)

    @rule(seed=st.one_of(st.none(), st.integers(0, 2**31)))
    def reset_seeded(self, seed: int | None) -> None:
        self.obs, self.info = self.env.reset(seed=seed)
        self.done, self.cards = False, self.info["cards_left"]
        STATS["episodes"] += 1
        STATS["inputs"] += 1

    @rule(data=st.data())
    def reset_with_a_deck(self, data: st.DataObject) -> None:
        deck = data.draw(st.permutations(self.game.pack))
        self.obs, self.info = self.env.reset(options={"deck": [card_code(c) for c in deck]})
        assert self.env.unwrapped.state == self.game.start(deck)
        self.done, self.cards = False, self.info["cards_left"]
        STATS["episodes"] += 1
        STATS["inputs"] += 1

    @rule(data=st.data())
    def reset_refused(self, data: st.DataObject) -> None:
        options = data.draw(st.one_of(bad_decks(self.game.pack).map(lambda d: {"deck": d}),
                                      st.just({"dek": []}), st.just([("deck", None)])))  # fmt: skip
        self.refused(lambda: self.env.reset(options=options))

    @rule(moves=st.integers(1, 500))
    def play_on(self, moves: int) -> None:
        """``moves`` steps, mostly legal, some illegal; a finished deal is followed by a new one."""
        for _ in range(moves):
            if self.done:
                self.obs, self.info = self.env.reset()
                self.done, self.cards = False, self.info["cards_left"]
                STATS["episodes"] += 1
            mask = self.info["action_mask"]
            legal = np.flatnonzero(mask)
            if self.rng.random() < 0.1:
                action = int(self.rng.integers(len(mask)))
            else:
                action = int(legal[self.rng.integers(len(legal))])
            before = self.env.unwrapped.state
            self.obs, reward, terminated, truncated, self.info = self.env.step(action)
            STATS["steps"] += 1
            if not mask[action]:
                assert self.info["illegal_action"] and self.env.unwrapped.state == before
                assert reward == -self.env.unwrapped.illegal_penalty
            assert self.info["cards_left"] <= self.cards  # cards only ever leave the game
            self.cards = self.info["cards_left"]
            self.done = terminated or truncated

    @precondition(lambda self: not self.done)
    @rule(action=BAD_ACTIONS)
    def step_refused(self, action: Any) -> None:
        self.refused(lambda: self.env.step(action))

    @precondition(lambda self: not self.done)
    @rule()
    def copy_and_pickle(self) -> None:
        twin = copy.copy(self.env.unwrapped)
        thawed = pickle.loads(pickle.dumps(self.env))
        before = self.snapshot()
        move = int(np.flatnonzero(self.info["action_mask"])[0])
        outs = [twin.step(move), thawed.step(move)]
        assert self.snapshot() == before, "stepping a copy changed the original"
        assert all(np.array_equal(o[0], outs[0][0]) and o[1:4] == outs[0][1:4] for o in outs)

    @invariant()
    def conserved(self) -> None:
        if not hasattr(self, "env"):
            return
        u = self.env.unwrapped
        assert self.env.observation_space.contains(self.obs)
        assert sorted(u.deck) == sorted(card_code(c) for c in self.game.pack)  # the deal is the pack
        assert self.info["cards_left"] == self.game.cards_left(u.state)
        assert self.done or self.info["action_mask"].any(), "mask all zero while the deal runs"


class BatchedEnvMachine(RuleBasedStateMachine):
    """One ``gym.make_vec`` batched env of 3 envs, of an ID drawn from ``ids``."""

    N = 3
    ids: tuple[str, ...] = IDS

    @initialize(data=st.data(), seed=st.integers(0, 2**31))
    def make(self, data: st.DataObject, seed: int) -> None:
        self.venv = gym.make_vec(data.draw(st.sampled_from(self.ids)), num_envs=self.N).unwrapped
        self.pack = self.venv.game.pack
        self.rng = np.random.default_rng(seed)
        self.obs, self.info = self.venv.reset(seed=seed)

    def snapshot(self) -> tuple[Any, ...]:
        v = self.venv
        return (v.obs.tobytes(), v.masks.tobytes(), v.states.tobytes(), v.elapsed.tobytes(),
                v.queue_pos.tobytes(), [str(g.bit_generator.state) for g in v.rngs])  # fmt: skip

    def refused(self, call: Any) -> None:
        refused(self.snapshot, call)

    @rule(
        seed=st.one_of(st.none(), st.integers(0, 2**31)), mask=st.lists(st.booleans(), min_size=3, max_size=3)
    )
    def reset_some(self, seed: int | None, mask: list[bool]) -> None:
        options = {"reset_mask": np.array(mask)} if any(mask) else None
        self.obs, self.info = self.venv.reset(seed=seed, options=options)
        STATS["episodes"] += sum(mask) if any(mask) else self.N
        STATS["inputs"] += 1

    @rule(data=st.data())
    def reset_refused(self, data: st.DataObject) -> None:
        bad = data.draw(st.one_of(
            st.just({"seed": [1, 2, -3]}), st.just({"seed": "7"}), st.just({"seed": [1, 2]}),
            bad_decks(self.pack).map(lambda d: {"options": {"decks": [d, None, None]}}),
            st.just({"options": {"reset_mask": np.array([1, 0, 0])}}),
            st.just({"options": {"reset_mask": np.zeros(3, dtype=bool)}}),
        ))  # fmt: skip
        self.refused(lambda: self.venv.reset(**bad))

    @rule(steps=st.integers(1, 300))
    def play_on(self, steps: int) -> None:
        for _ in range(steps):
            masks = self.info["action_mask"]
            acts = np.argmax(np.where(masks == 1, self.rng.random(masks.shape), -1.0), axis=1)
            wild = self.rng.random(self.N) < 0.1
            acts[wild] = self.rng.integers(masks.shape[1], size=int(wild.sum()))
            self.obs, _, terminated, truncated, self.info = self.venv.step(acts)
            STATS["steps"] += self.N
            STATS["episodes"] += int((terminated | truncated).sum())

    @rule(acts=st.one_of(st.just([0, 0]), st.just([0.0, 0.0, 0.0]), st.just([0, 0, 99]), st.just([-1, 0, 0]),
                         st.just([[0, 0, 0]]), st.just("000")))  # fmt: skip
    def step_refused(self, acts: Any) -> None:
        self.refused(lambda: self.venv.step(np.asarray(acts)))

    @rule()
    def copy_and_pickle(self) -> None:
        before = self.snapshot()
        for twin in (copy.copy(self.venv), pickle.loads(pickle.dumps(self.venv))):
            twin.step(np.argmax(twin.action_masks(), axis=1))
        assert self.snapshot() == before, "stepping a copy changed the original"

    @invariant()
    def conserved(self) -> None:
        if not hasattr(self, "venv"):
            return
        assert self.venv.observation_space.contains(self.obs)
        for i in range(self.N):
            assert sorted(self.venv.decks[i].tolist()) == sorted(self.pack)
            if self.info["_cards_left"][i]:  # a partial reset reports only the envs it dealt
                assert self.info["cards_left"][i] == self.venv.game.cards_left(self.venv.state(i))


def rss_mb() -> float:
    """The process's resident memory now (Linux), in MB."""
    with open("/proc/self/status") as status:
        kb = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    return kb / 1024


def pinned(machine: type[RuleBasedStateMachine], env_id: str) -> type[RuleBasedStateMachine]:
    """The machine on one ID."""
    return type(f"{machine.__name__}On{env_id.split('/')[-1]}", (machine,), {"ids": (env_id,)})


def run(machine: type[RuleBasedStateMachine], env_id: str, steps: int) -> dict[str, Any]:
    """Run ``machine`` on one ID, in batches of examples, until it has taken ``steps`` env steps."""
    from hypothesis import Phase
    from hypothesis.stateful import run_state_machine_as_test

    for key in STATS:
        STATS[key] = 0
    start, before = time.perf_counter(), rss_mb()
    config = settings(max_examples=20, stateful_step_count=50, deadline=None, database=None,
                      phases=[Phase.generate], suppress_health_check=list(HealthCheck))  # fmt: skip
    while STATS["steps"] < steps:  # any broken invariant raises: a failure ends the run loudly
        run_state_machine_as_test(pinned(machine, env_id), settings=config)
    return {**STATS, "env_id": env_id, "machine": machine.__name__, "seconds": time.perf_counter() - start,
            "rss_before_mb": before, "rss_after_mb": rss_mb(), "failures": 0}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=at_least(1), default=1_000_000, help="env steps per ID and machine")
    p.add_argument("--env", action="append", choices=IDS, help="only these IDs")
    args = p.parse_args(argv)
    rows = []
    for env_id in args.env or IDS:
        for machine in (SingleEnvMachine, BatchedEnvMachine):
            row = run(machine, env_id, args.steps)
            rows.append(row)
            print(f"{env_id} {row['machine']}: {row['steps']:,} steps, {row['episodes']:,} episodes, "
                  f"{row['inputs']:,} inputs ({row['refused']:,} refused as they should be), 0 failures, "
                  f"{row['seconds']:.0f}s, memory {row['rss_before_mb']:.0f} -> {row['rss_after_mb']:.0f} MB",
                  flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
