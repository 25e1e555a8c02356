"""Adding a game is cheap, and proven: a toy patience written entirely in this file, registered
through the public extension API, goes through everything a built-in game gets.

The toy, "Triplet": 16 cards (A 2 3 4 of each suit), three upcards over the stock. A move lays off
two upcards of one suit; their slots are refilled from the stock, lower slot first. Won when the
stock is used up and the table is cleared. ``docs/adding-a-game.md`` walks through this file.
"""

from __future__ import annotations

import io
import warnings
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env
from test_vector import assert_same, next_step_view, random_actions

from quadrat_env import GameSpec, IllegalMove, env_ids, register_game
from quadrat_env.cards import card_symbol
from quadrat_env.core.env import PatienceEnv
from quadrat_env.core.jit import jit
from quadrat_env.core.kernel import build
from quadrat_env.core.layout import Layout
from quadrat_env.core.render import CARD_W, GAP, MARGIN, TITLE, back, canvas, card, empty
from quadrat_env.core.rules import Rules
from quadrat_env.core.vector import PatienceVectorEnv
from quadrat_env.registry import unregister_game

TOY = "toy/Triplet-v0"
PACK = tuple(s * 13 + r for s in range(4) for r in range(4))  # A 2 3 4 of clubs, diamonds, ...
N, SLOTS = len(PACK), 3
PAIRS = ((0, 1), (0, 2), (1, 2))  # move m lays off the slots PAIRS[m]
FIRST, SECOND = np.array([a for a, _ in PAIRS]), np.array([b for _, b in PAIRS])
INDEX = np.full(52, -1, dtype=np.int64)
INDEX[list(PACK)] = np.arange(N)  # card -> place in the pack (its one-hot position)
LAYOUT = Layout(
    ("upcards", SLOTS * N, "slot `i` one-hot at `16*i + k` (`k`: the card's place in the pack)"),
    ("unseen", N, "1 for each card still in the stock"),
    ("stock", 1, "stock size / 13"),
)
NEXT, UP, DECK = 0, 1, 1 + SLOTS  # the state row: next stock card, three upcards, the deck


# -- 1. the rules, written once, compiled -------------------------------------------------------
@jit
def deal(s, deck, o, p):  # noqa: ANN001, ANN201
    o[:] = 0.0
    s[NEXT] = SLOTS
    for k in range(N):
        s[DECK + k] = deck[k]
        if k < SLOTS:
            s[UP + k] = deck[k]
            o[k * N + INDEX[deck[k]]] = 1.0
        else:
            o[SLOTS * N + INDEX[deck[k]]] = 1.0
    o[(SLOTS + 1) * N] = (N - SLOTS) / (N - SLOTS)


@jit
def legal(s, m, p):  # noqa: ANN001, ANN201
    found = False
    for move in range(3):
        a, b = s[UP + FIRST[move]], s[UP + SECOND[move]]
        if a >= 0 and b >= 0 and a // 13 == b // 13:
            m[move] = 1
            found = True
    return found


@jit
def play(s, a, o, p):  # noqa: ANN001, ANN201
    for slot in range(SLOTS):
        if slot == FIRST[a] or slot == SECOND[a]:
            o[slot * N + INDEX[s[UP + slot]]] = 0.0
            if s[NEXT] < N:
                c = s[DECK + s[NEXT]]
                s[UP + slot] = c
                o[slot * N + INDEX[c]] = 1.0
                o[SLOTS * N + INDEX[c]] = 0.0
                s[NEXT] += 1
            else:
                s[UP + slot] = -1
    o[(SLOTS + 1) * N] = (N - s[NEXT]) / (N - SLOTS)


@jit
def cards_left(s, p):  # noqa: ANN001, ANN201
    return N - s[NEXT] + (s[UP] >= 0) + (s[UP + 1] >= 0) + (s[UP + 2] >= 0)


@jit
def won(s, p):  # noqa: ANN001, ANN201
    return cards_left(s, p) == 0


@jit
def key(s, p):  # noqa: ANN001, ANN201 - slots are interchangeable: (stock position, sorted upcards)
    a, b, c = sorted((s[UP] + 1, s[UP + 1] + 1, s[UP + 2] + 1))
    return ((s[NEXT] * 64 + a) * 64 + b) * 64 + c


# -- 2. the rules object: readable states, moves in words, the greedy rule -----------------------
class TripletState(NamedTuple):
    deck: tuple[int, ...]
    next: int
    slots: tuple[int, int, int]


class TripletRules(Rules[TripletState]):
    kernel = build(deal, legal, play, cards_left, won, key, obs_size=LAYOUT.size)
    state_size, layout, name, pack_size, num_moves = DECK + N, LAYOUT, "Triplet", N, len(PAIRS)
    search_order, max_moves = (0, 1, 2), N
    params = np.zeros(1, dtype=np.int64)  # no variant settings

    @property
    def pack(self) -> tuple[int, ...]:
        return PACK

    def to_row(self, state: TripletState) -> np.ndarray:
        return np.array([state.next, *state.slots, *state.deck], dtype=np.int64)

    def view(self, row: np.ndarray) -> TripletState:
        v = row.tolist()
        return TripletState(tuple(v[DECK:]), v[NEXT], tuple(v[UP:DECK]))  # type: ignore[arg-type]

    def unseen(self, state: TripletState) -> frozenset[int]:
        return frozenset(state.deck[state.next :])

    def describe(self, state: TripletState, move: int) -> str:
        return "lay off " + " ".join(card_symbol(state.slots[i]) for i in PAIRS[move])

    def greedy(self, mask: np.ndarray) -> int:
        return int(np.flatnonzero(mask)[0])

    def determinize(self, observation: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        up = observation[LAYOUT["upcards"].slice].reshape(SLOTS, N)
        slots = [PACK[int(b.argmax())] if b.max() > 0.5 else -1 for b in up]
        unseen = np.array(PACK)[observation[LAYOUT["unseen"].slice] > 0.5]
        seen = [c for c in PACK if c not in set(unseen.tolist())]
        deck = seen + [int(c) for c in rng.permutation(unseen)]
        return self.to_row(TripletState(tuple(deck), len(seen), tuple(slots)))  # type: ignore[arg-type]


# -- 3. the env (its docstring is the spec) and the batched env ----------------------------------
class TripletEnv(PatienceEnv):
    """Triplet: lay off pairs of one suit from three upcards over a 16-card stock.

    ## Description
    A toy patience for the extension test. Won when the stock is used up and the table cleared.

    ## Action Space
    `Discrete(4)`: 0-2 lay off slots (0,1), (0,2), (1,2); 3 ends a deal that opens with no pair.

    ## Observation Space
    `Box(0, 1, (65,), float32)`, the pieces of `LAYOUT`.

    ## Rewards
    +1 on the step that wins (`reward_mode="dense"`: +1/16 per card laid off).

    ## Episode End
    No pair showing. Truncated after 100 steps.

    ## Arguments
    The common ones: `render_mode`, `reward_mode`, `illegal_action`, `illegal_penalty`.

    ## Version History
    * v0: initial version.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(TripletRules(), **kwargs)

    def draw_text(self, state: TripletState) -> str:
        shown = "  ".join(f"{i}:{card_symbol(c) if c >= 0 else '··'}" for i, c in enumerate(state.slots))
        return f"Triplet · stock {N - state.next}\n  {shown}"

    def draw_rgb(self, state: TripletState) -> np.ndarray:
        image, draw = canvas(2 * MARGIN + 4 * (CARD_W + GAP), TITLE + 2 * MARGIN + 80, "Triplet")
        back(draw, MARGIN, TITLE + MARGIN, N - state.next)
        for i, c in enumerate(state.slots):
            x = MARGIN + (i + 1) * (CARD_W + GAP)
            card(draw, x, TITLE + MARGIN, c) if c >= 0 else empty(draw, x, TITLE + MARGIN, str(i))
        return np.asarray(image, dtype=np.uint8)


class TripletVectorEnv(PatienceVectorEnv):
    single_env_class = TripletEnv


# -- 4. one call registers it (here for this module's tests only, so that the toy ID does not
# join every later ID listing of the test session) ------------------------------------------------
SPEC = GameSpec(name="Triplet", rules=TripletRules, env_class=TripletEnv, vector_env_class=TripletVectorEnv,
                ids={TOY: {}}, max_episode_steps=100)  # fmt: skip


@pytest.fixture(scope="module", autouse=True)
def registered():
    register_game(SPEC)
    yield
    unregister_game(SPEC)
    assert TOY not in env_ids() and TOY not in gym.registry


# -- what a built-in game gets, the toy gets ------------------------------------------------------
def test_checkers_pass():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gym.make(TOY, render_mode="ansi").unwrapped)
        sb3_check_env(gym.make(TOY), warn=True)


def test_batched_env_matches_sync_vector_env_step_by_step():
    native, sync = gym.make_vec(TOY, num_envs=5), gym.make_vec(TOY, num_envs=5, vectorization_mode="sync")
    assert isinstance(native.unwrapped, TripletVectorEnv)
    first = native.reset(seed=3), sync.reset(seed=3)
    assert_same(first[0], first[1], "reset")
    rng, info, endings = np.random.default_rng(0), first[0][1], 0
    for t in range(300):
        acts = random_actions(rng, info["action_mask"], illegal_share=0.05)
        out_native, out_sync = native.step(acts), next_step_view(sync.step(acts))
        assert_same(out_native, out_sync, f"step {t}")
        info, endings = out_native[4], endings + int(out_native[2].sum())
    assert endings >= 10


def test_deck_replay_and_bad_decks():
    env = gym.make(TOY)
    obs, _ = env.reset(seed=4)
    deck = env.unwrapped.deck
    assert len(deck) == N and np.array_equal(env.reset(options={"deck": deck})[0], obs)
    for bad, message in [(list(deck[:15]), "15 cards"), (["5C", *deck[1:]], "5C, not in"),
                         ([deck[0], *deck[:15]], "repeats")]:  # fmt: skip
        with pytest.raises(ValueError, match=message):
            env.reset(options={"deck": bad})
    assert env.unwrapped.deck == deck


def test_rules_verbs_and_illegal_moves():
    rules = TripletRules()
    state = rules.start(PACK)  # AC 2C 3C over 4C AD ...: every pair is clubs
    assert rules.legal_moves(state) == (0, 1, 2) and rules.cards_left(state) == 16
    after = rules.play(state, 0)
    assert after.slots == (PACK[3], PACK[4], PACK[2]) and after.next == 5
    with pytest.raises(IllegalMove):
        rules.play(after, 0)  # 4C AD: no pair


def test_random_greedy_solver_and_planner_agents():
    from quadrat_env.agents import GreedyAgent, RandomAgent, evaluate
    from quadrat_env.agents.planner import PlannerAgent
    from quadrat_env.agents.solver import solve

    deals = range(200)
    rates = {a.name: evaluate(TOY, a, deals, progress=False)[0] for a in
             (RandomAgent(seed=0), GreedyAgent(TOY), PlannerAgent(TOY, samples=4))}  # fmt: skip
    assert all(s.illegal_rate == 0 for s in rates.values())
    env = gym.make(TOY, illegal_action="raise")
    solvable = 0
    for seed in deals:
        env.reset(seed=seed)
        line = solve(TOY, env.unwrapped.deck)
        if line is not None:
            solvable += 1
            env.reset(options={"deck": env.unwrapped.deck})
            for action in line:
                *_, info = env.step(action)
            assert info["won"]
    assert rates["greedy"].wins <= solvable and rates["planner"].wins <= solvable and solvable > 0


def test_ansi_and_rgb_array_pictures():
    env = gym.make(TOY, render_mode="ansi")
    env.reset(seed=1)
    assert env.render().startswith("Triplet · stock 13")
    env = gym.make(TOY, render_mode="rgb_array")
    env.reset(seed=1)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.shape[2] == 3 and frame.std() > 10


def test_terminal_play_command(monkeypatch, capsys):
    from quadrat_env.experiments import play

    env = gym.make(TOY)
    for seed in range(100):  # a deal that goes on after its first move
        _, info = env.reset(seed=seed)
        move = int(np.flatnonzero(info["action_mask"])[0])
        if move < len(PAIRS) and not env.step(move)[2]:
            break
    out = io.StringIO()
    code = play.play(TOY, seed, io.StringIO(f"h\n{move}\nq\n"), out)
    assert code == 1 and "greedy suggests" in out.getvalue() and "lay off" in out.getvalue()
    monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))  # the command line knows the new game
    assert play.main(["Triplet", "--seed", "2"]) == 1 and "Triplet · stock" in capsys.readouterr().out


def test_one_benchmark_row(tmp_path):
    from quadrat_env.experiments import benchmark

    benchmark.main(["--deals", "30", "--planner-deals", "5", "--planner-samples", "2", "--env", TOY,
                    "--out", str(tmp_path), "--no-plots", "--no-progress"])  # fmt: skip
    import json

    rows = json.loads((tmp_path / "benchmark.json").read_text())["rows"]
    assert [r["agent"] for r in rows] == ["random", "greedy", "planner", "solver (knows the stock)"]
    assert [r["episodes"] for r in rows] == [30, 30, 5, 30] and all(r["env_id"] == TOY for r in rows)


def test_search_copying_only_the_changing_prefix_decides_the_same():
    """``build(..., mutable=DECK)``: the search copies only the row before the deck, which never
    changes after the deal; every deal must be decided as with whole-row copies."""
    from quadrat_env.core.kernel import new_memo

    fast = build(deal, legal, play, cards_left, won, key, obs_size=LAYOUT.size, mutable=DECK)
    rng, p = np.random.default_rng(0), np.zeros(1, dtype=np.int64)
    rows = np.zeros((300, DECK + N), dtype=np.int64)
    for row in rows:
        deal(row, rng.permutation(np.array(PACK)), np.zeros(LAYOUT.size, dtype=np.float32), p)
    order = np.array(TripletRules.search_order, dtype=np.int64)
    lengths = []
    for kernel in (TripletRules.kernel, fast):
        out = np.zeros(len(rows), dtype=np.int64)
        kernel.solve_rows(rows, p, order, N, new_memo(), out)
        lengths.append(out)
    assert np.array_equal(lengths[0], lengths[1]) and 0 < (lengths[0] >= 0).sum() < len(rows)


@pytest.mark.parametrize("mutable", [-1, 2.5, True])
def test_build_refuses_a_bad_mutable_prefix(mutable):
    with pytest.raises(ValueError, match="mutable must be"):
        build(deal, legal, play, cards_left, won, key, obs_size=LAYOUT.size, mutable=mutable)
