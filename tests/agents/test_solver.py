from __future__ import annotations

import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from conftest import always_play, deck_starting, play_from
from quadrat_env.agents.solver import Solver, solve, solve_state

from quadrat_env.cards import SKAT_PACK, format_cards
from quadrat_env.games.quadrat.rules import quadrat
from quadrat_env.games.quadrille.rules import QuadrilleRules

ROOT = Path(__file__).resolve().parents[2]
WINNING_QUADRILLE = "QC QD QH QS " + " ".join(f"{r}{s}" for s in "CDHS" for r in "5432AK6789TJ")
RANK_BY_RANK = " ".join(f"{r}{s}" for r in "A23456789TJQK" for s in "CDHS")


def replay(env_id, deck, line):
    env = gym.make(env_id, illegal_action="raise")
    _, info = env.reset(options={"deck": deck})
    for action in line:
        _, _, terminated, _, info = env.step(action)
    return terminated and info["won"]


@pytest.mark.parametrize("env_id", [
    "quadrat_env/Quadrat-v0", "quadrat_env/Quadrat52-v0",
    "quadrat_env/Zudecken-v0", "quadrat_env/Quadrille-v0",
])  # fmt: skip
def test_winning_lines_replay_to_a_win(env_id):
    env = gym.make(env_id)
    found = 0
    for seed in range(60):
        env.reset(seed=seed)
        deck = list(env.unwrapped.deck)
        line = solve(env_id, deck)
        if line is not None:
            found += 1
            assert replay(env_id, deck, line), (seed, line)
    assert found > 0


@pytest.mark.parametrize(("env_id", "deck", "winnable"), [
    # Zudecken: four of a rank at a time, thirteen times -- cleared
    ("quadrat_env/Zudecken-v0", RANK_BY_RANK, True),
    # AC 2C 3D 4H: only the clubs go; the stock gives 5S 9C -> 5S 9C 3D 4H matches nothing
    ("quadrat_env/Zudecken-v0", format_cards(deck_starting("AC 2C 3D 4H 5S 9C")), False),
    ("quadrat_env/Zudecken-v0", format_cards(deck_starting("AC 2D 3H 4S")), False),  # no move
    ("quadrat_env/Quadrat-v0", format_cards(SKAT_PACK), True),  # sorted: every refill pairs
    # 7C 8C / 7D 7H: the clubs go, the stock gives 7S 9C: no pair
    ("quadrat_env/Quadrat-v0", format_cards(deck_starting("7C 8C 7D 7H 7S 9C", 32)), False),
    ("quadrat_env/Quadrille-v0", WINNING_QUADRILLE, True),
])  # fmt: skip
def test_hand_built_decks_are_decided_right(env_id, deck, winnable):
    line = solve(env_id, deck)
    assert (line is not None) == winnable
    if winnable:
        assert replay(env_id, deck, line)


def test_solve_keeps_its_solvers_and_decides_as_a_fresh_one():
    # solve() keeps a solver per (ID, kwargs) and reuses its memo: every deal decided as a new
    # solver decides it, on two packs in turn and from several threads at once
    env_id, jobs = "quadrat_env/Zudecken-v0", []
    for ranks in (4, 13, 4):
        game = gym.make(env_id, ranks=ranks).unwrapped.game
        for seed in range(25):
            deck = [int(c) for c in np.random.default_rng(seed).permutation(game.pack)]
            jobs.append((ranks, deck, Solver(game).line(game.start(deck))))
    assert 0 < sum(line is None for *_, line in jobs) < len(jobs)
    assert [solve(env_id, deck, ranks=r) for r, deck, _ in jobs] == [line for *_, line in jobs]
    with ThreadPoolExecutor(4) as pool:
        lines = list(pool.map(lambda job: solve(env_id, job[1], ranks=job[0]), jobs))
    assert lines == [line for *_, line in jobs]
    with pytest.raises(ValueError, match="ranks"):
        solve(env_id, jobs[0][1], ranks=[4])  # unhashable: refused by the rules, not the cache


def test_zudecken_solver_beats_greedy_where_greedy_fails():
    # Deals that largest-group greedy loses but the solver wins: the bound is real search.
    env = gym.make("quadrat_env/Zudecken-v0").unwrapped
    rescued = 0
    for seed in range(40):
        env.reset(seed=seed)
        greedy = play_from(env.game, env.state, lambda m: max(m, key=lambda a: (a >= 10, a >= 6, -a)))
        line = solve_state(env.game, env.state)
        rescued += line is not None and not env.game.is_won(greedy)
    assert rescued >= 20


@pytest.mark.parametrize("n_cards", [32, 52])
def test_quadrat_solver_agrees_with_any_legal_play(n_cards):
    game, rng = quadrat(n_cards), random.Random(n_cards)
    env = gym.make("quadrat_env/Quadrat-v0" if n_cards == 32 else "quadrat_env/Quadrat52-v0")
    for seed in range(300):
        env.reset(seed=seed)
        state = env.unwrapped.state
        any_play = play_from(game, state, rng.choice)
        assert game.is_won(any_play) == (Solver(game).line(state) is not None), seed


def test_quadrille_solver_matches_always_play_and_no_deferring_policy_beats_it():
    game, rng = QuadrilleRules(), random.Random(0)
    env = gym.make("quadrat_env/Quadrille-v0").unwrapped
    for seed in range(150):
        env.reset(seed=seed)
        always = game.is_won(play_from(game, env.state, always_play))
        assert always == (solve_state(game, env.state) is not None)
        for eps in (0.05, 0.2):  # deal instead of playing now and then

            def defer(moves, eps=eps):
                return 0 if moves[0] == 0 and rng.random() < eps else moves[-1]

            assert not game.is_won(play_from(game, env.state, defer)) or always, seed


def test_command_line():
    run = [sys.executable, "-m", "quadrat_env.agents.solver"]
    out = subprocess.run(run + ["Zudecken", RANK_BY_RANK], capture_output=True, text=True)
    assert out.returncode == 0 and "winnable in 13 actions: 10 10" in out.stdout
    out = subprocess.run(run + ["Quadrat", "7C 8C"], capture_output=True, text=True)
    assert out.returncode == 2 and "needs 32" in out.stderr
    out = subprocess.run(run + ["Zudecken", "--deals", "20"], capture_output=True, text=True)
    assert out.returncode == 0 and "/20 deals winnable" in out.stdout
    out = subprocess.run(run + ["Solitaire", "--seed", "1"], capture_output=True, text=True)
    assert out.returncode == 2 and "unknown game" in out.stderr


@pytest.mark.parametrize("env_id", ["quadrat_env/Quadrat-v0", "quadrat_env/Zudecken-v0"])
def test_compiled_search_finds_the_reference_search_line(env_id):
    from scripts.reference_search import reference_game, search_for

    env = gym.make(env_id).unwrapped
    game = env.game
    ref = reference_game(game)
    solver, found = Solver(game), 0
    for seed in range(150):
        env.reset(seed=seed)
        plain = search_for(game)
        line = solver.line(env.state)
        assert line == plain.line(ref.start(env.state.deck)), seed  # same order, same first winning line
        found += line is not None
    assert found > 10


def test_command_line_times_the_reference_search():
    command = [sys.executable, "-m", "scripts.reference_search", "Zudecken", "--deals", "30"]
    out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and "they agree" in out.stdout


def test_memo_generations_and_a_full_memo():
    """The lost-position memo is a cache: a new deal forgets everything (one increment), and once
    full it stops remembering; lookups never report a key that was not added in this deal."""
    from quadrat_env.core.kernel import MEMO_FILL, memo_add, memo_has, memo_new_deal, new_memo

    memo = new_memo()
    memo_new_deal(memo)
    keys = np.arange(1, MEMO_FILL + 10, dtype=np.int64) * 7919
    for k in keys:
        memo_add(memo, k)
    assert all(memo_has(memo, k) for k in keys[:MEMO_FILL])
    assert not any(memo_has(memo, k) for k in keys[MEMO_FILL:])  # not stored: the memo was full
    assert not memo_has(memo, 3)
    memo_new_deal(memo)
    assert not any(memo_has(memo, k) for k in keys[:50])
    memo_add(memo, keys[0])
    assert memo_has(memo, keys[0]) and not memo_has(memo, keys[1])


def test_a_memo_shared_across_deals_gives_each_deal_its_own_answer():
    """One Solver (one memo) over many deals agrees with a fresh Solver per deal."""
    env = gym.make("quadrat_env/Zudecken-v0").unwrapped
    shared = Solver(env.game)
    for seed in range(40):
        env.reset(seed=seed)
        assert (shared.line(env.state) is None) == (Solver(env.game).line(env.state) is None)


@pytest.mark.parametrize(
    "env_id", ["quadrat_env/Zudecken-v0", "quadrat_env/Quadrat-v0", "quadrat_env/Quadrille-v0"]
)
def test_winnable_decides_many_deals_as_line_does_one_by_one(env_id):

    env = gym.make(env_id).unwrapped
    solver, rows = Solver(env.game), []
    for seed in range(120):
        env.reset(seed=seed)
        rows.append(env.game.to_row(env.state))
    expected = [solver.line_from_row(row) is not None for row in rows]
    assert solver.winnable(np.array(rows)).tolist() == expected and any(expected)


def test_wins_after_refuses_the_end_action_and_unknown_moves():
    """The compiled search has no table row for "end" (it would read past its tables): refused."""
    env = gym.make("quadrat_env/Zudecken-v0").unwrapped
    env.reset(seed=0)
    solver, row = Solver(env.game), env.game.to_row(env.state)
    for moves in ([11], [0, 11], [-1]):
        with pytest.raises(ValueError, match="game's moves 0..10"):
            solver.wins_after(row, np.array(moves))
    assert solver.wins_after(row, np.array([], dtype=np.int64)).shape == (1, 0)
