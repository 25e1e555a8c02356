"""The exact Zudecken solver: known optima, symmetry that changes nothing, an independent brute
force, and the env's rules."""

from __future__ import annotations

import itertools
from functools import cache

import gymnasium as gym
import numpy as np
import pytest
from quadrat_env.agents.zudecken.exact import ExactSolver, main, optimal_win_rate
from quadrat_env.agents.zudecken.exact_key import canonical
from quadrat_env.agents.zudecken.exact_memo import entries

# Optimal win probabilities from a random deal, computed with a separate implementation.
KNOWN = {4: 0.975671672243, 5: 0.908473288689, 6: 0.818695369460}


@pytest.mark.parametrize("n", sorted(KNOWN))
def test_optimal_win_rates_of_small_packs(n):
    assert optimal_win_rate(n) == pytest.approx(KNOWN[n], abs=5e-13)


def test_symmetry_changes_no_value():
    """Without the symmetry reduction (every position on its own: 5.2 million of them), the same
    optimum, to rounding."""
    plain = ExactSolver(4, "dealt", "pairs", symmetric=False)
    reduced = ExactSolver(4, "dealt", "pairs")
    assert plain.win_rate() == pytest.approx(reduced.win_rate(), abs=1e-12)
    assert plain.positions > 100 * reduced.positions
    assert_census(plain)
    assert_census(reduced)


def test_the_key_is_the_same_for_positions_equal_up_to_renaming_suits_and_ranks():
    rng = np.random.default_rng(0)
    n = 7

    def key(cells: np.ndarray) -> tuple[int, int]:  # cells[suit, rank]: 0 covered, 1 up, 2 unseen
        up, unseen = (sum(1 << (s * n + r) for s, r in np.argwhere(cells == v)) for v in (1, 2))
        return canonical(np.int64(up), np.int64(unseen), n)

    keys = set()
    for _ in range(300):
        cells = rng.integers(0, 3, size=(4, n))
        cells[rng.permutation(4)[: rng.integers(3)]] = rng.integers(3)  # suits alike, so ties
        assert key(cells) == key(cells[rng.permutation(4)][:, rng.permutation(n)])
        keys.add(key(cells))
    assert len(keys) > 250  # and not one key for all


def brute_force(n: int, need_clear: bool, max_group: int):
    """Expectimax written apart from the solver: sets of cards, refills drawn together as every
    subset of the unseen cards, no symmetry."""

    def matches(a: int, b: int) -> bool:
        return a // n == b // n or a % n == b % n

    def groups(table: frozenset) -> list[frozenset]:
        out = []
        for size in range(2, max_group + 1):
            for g in itertools.combinations(sorted(table), size):
                if all(any(matches(a, b) for b in g if b != a) for a in g):
                    out.append(frozenset(g))
        return out

    @cache
    def decide(table: frozenset, unseen: frozenset) -> float:
        options = groups(table)
        if not options:
            return float(not unseen and (not table or not need_clear))
        return max(after(table - g, unseen, len(g)) for g in options)

    def after(kept: frozenset, unseen: frozenset, covered: int) -> float:
        k = min(covered, len(unseen))
        draws = list(itertools.combinations(sorted(unseen), k))
        return sum(decide(kept | set(d), unseen - set(d)) for d in draws) / len(draws)

    return decide


def late_positions(solver: ExactSolver, rng: np.random.Generator, count: int, stock: int = 6) -> list:
    """Positions reached by random play with at most ``stock`` cards left unseen."""
    found = []
    while len(found) < count:
        deck = [int(c) for c in rng.permutation(4 * solver.n)]
        table, pos = set(deck[:4]), 4
        while options := solver.groups(sum(1 << c for c in table)):
            group = options[rng.integers(len(options))]
            table = {c for c in table if not group >> c & 1}
            take = min(4 - len(table), len(deck) - pos)  # the refill, in deck order
            table |= set(deck[pos : pos + take])
            pos += take
            if len(deck) - pos <= stock:
                found.append((frozenset(table), frozenset(deck[pos:])))
                break
    return found


CASES = [(4, "cleared", "groups"), (5, "dealt", "groups"), (6, "cleared", "pairs"), (13, "cleared", "groups")]


@pytest.mark.parametrize(("n", "win", "cover"), CASES)
def test_late_positions_agree_with_an_independent_brute_force(n, win, cover):
    solver = ExactSolver(n, win, cover)
    decide = brute_force(n, win == "cleared", 4 if cover == "groups" else 2)
    positions = late_positions(solver, np.random.default_rng(n), 30, stock=8)
    values = [decide(table, unseen) for table, unseen in positions]
    for (table, unseen), value in zip(positions, values, strict=True):
        mask = lambda cs: sum(1 << c for c in cs)  # noqa: E731
        assert solver.value(mask(table), mask(unseen)) == pytest.approx(value, abs=1e-12)
    assert sum(0 < v < 1 for v in values) >= 5, "too few positions whose outcome is in doubt"


def slots_to_mask(slots) -> int:  # noqa: ANN001
    return sum(1 << c for c in slots if c >= 0)


@pytest.mark.parametrize(("win", "cover"), [("cleared", "groups"), ("dealt", "pairs")])
def test_the_solvers_rules_are_the_envs(win, cover):
    """Random play on the env; at each step the solver's coverable groups are the env's legal
    moves, the refill is the right number of unseen cards, and the outcome is the env's."""
    from quadrat_env.slots.kernel import GROUPS

    env = gym.make("quadrat_env/Zudecken-v0", win=win, cover=cover).unwrapped
    solver = ExactSolver(13, win, cover)
    rng = np.random.default_rng(0)
    wins = 0
    for seed in range(150):
        _, info = env.reset(seed=seed)
        while True:
            state = env.state
            table, unseen = slots_to_mask(state.slots), slots_to_mask(state.deck[state.next :])
            legal = [a for a in np.flatnonzero(info["action_mask"]) if a < len(GROUPS)]
            env_groups = sorted(slots_to_mask([state.slots[i] for i in GROUPS[a]]) for a in legal)
            assert env_groups == sorted(solver.groups(table))
            if not legal:  # a deal that opens with no group offers only "end"
                _, _, terminated, _, info = env.step(env.end_action)
                assert terminated and info["won"] == solver.won(table, unseen)
                break
            action = int(rng.choice(legal))
            group = slots_to_mask([state.slots[i] for i in GROUPS[action]])
            _, _, terminated, _, info = env.step(action)
            new = env.state
            new_table, new_unseen = slots_to_mask(new.slots), slots_to_mask(new.deck[new.next :])
            drawn = new_table & ~(table & ~group)
            assert drawn & ~unseen == 0 and new_unseen == unseen & ~drawn
            assert bin(drawn).count("1") == min(bin(group).count("1"), bin(unseen).count("1"))
            if terminated:
                assert not solver.groups(new_table) and info["won"] == solver.won(new_table, new_unseen)
                wins += info["won"]
                break
    assert wins > 0


def test_bad_arguments():
    bad = (
        ({"n_ranks": 0}, "n_ranks"),
        ({"n_ranks": 14}, "n_ranks"),
        ({"n_ranks": 4.0}, "n_ranks"),
        ({"win": "all"}, "win"),
        ({"cover": "trios"}, "cover"),
        ({"threads": 0}, "threads"),
        ({"cache_slots": 0}, "cache_slots"),
        ({"cache_slots": 3}, "cache_slots"),
    )
    for kwargs, message in bad:
        with pytest.raises(ValueError, match=message):
            ExactSolver(**kwargs)


def assert_census(solver: ExactSolver) -> None:
    """The census of a solved 16-card pack counts every memoised position by upcards and unseen cards."""
    census = solver.census()
    assert census.sum() == solver.positions
    assert census[0, 16] == 1  # the start: no upcard, all 16 cards unseen
    assert census[:, 16].sum() == 1 and census[0, 15] == 0  # refills draw one card at a time
    assert (census[1:, 16:] == 0).all() and census[4, 0] > 0  # full tables once the stock is out


def test_census_counts_every_memoised_position_by_upcards_and_unseen_cards():
    """With the symmetry reduction here; without it in ``test_symmetry_changes_no_value``, on the
    solve it makes anyway (the env's rules without the reduction memoise 11 million positions)."""
    solver = ExactSolver(4)
    solver.win_rate()
    assert_census(solver)


def memo_of(solver: ExactSolver) -> tuple[np.ndarray, np.ndarray]:
    """The memo's keys and values, in the order of the keys."""
    used = solver.keys[:, 0] != -1
    keys, values = solver.keys[used], solver.vals[used]
    order = np.lexsort((keys[:, 1], keys[:, 0]))
    return keys[order], values[order]


def test_threads_sharing_the_memo_find_the_same_values_to_the_bit():
    """Two searches over one memo that fills and grows under them (no room made in advance) keep
    the same positions with the same values as one search, to the bit; a whole solve on two threads
    has both write to it."""
    one, two = ExactSolver(6, threads=1), ExactSolver(6, threads=2)
    start = two.keys.shape[0]
    assert one.value(0, one.all_cards) == two.value(0, two.all_cards, threads=2) == one.win_rate()
    assert two.keys.shape[0] > start and one.positions == two.positions
    for mine, theirs in zip(memo_of(one), memo_of(two), strict=True):
        assert np.array_equal(mine, theirs)
    both = ExactSolver(6, threads=2)
    assert both.win_rate() == one.win_rate()
    assert entries(both.shared, 0) > 0 and entries(both.shared, 1) > 0


def test_command_line(capsys):
    assert main(["--ranks", "4", "--threads", "2"]) == 0
    out = capsys.readouterr().out
    assert "0.975671672243" in out and "24,000 canonical positions" in out and "on 2 threads" in out
    assert "positions with at most 2 upcards: 5,212" in out
    with pytest.raises(SystemExit) as exc:
        main(["--ranks", "20"])
    assert exc.value.code == 2 and "n_ranks must be 1..13" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["--threads", "0"])
    assert exc.value.code == 2 and "threads" in capsys.readouterr().err


def test_optimal_agent_values_late_positions_of_the_32_card_game_exactly():
    """Greedy play to the last few cards, then each legal move's value against the brute force
    (the Skat pack's ranks renumbered 0..7), and the agent's move is a best one."""
    from quadrat_env.agents.zudecken.optimal import OptimalAgent

    agent = OptimalAgent("quadrat_env/Zudecken32-v0", cache=False)  # no whole-table solve
    env = gym.make("quadrat_env/Zudecken32-v0")
    ranks = sorted({c % 13 for c in env.unwrapped.game.pack})
    decide = brute_force(8, True, 4)
    checked = 0
    for seed in range(300):
        obs, info = env.reset(seed=seed)
        while not (env.unwrapped.state.stock_size <= 6 and info["action_mask"][:11].sum() > 1):
            obs, _, done, _, info = env.step(env.unwrapped.game.greedy(info["action_mask"]))
            if done:
                break
        else:
            state = env.unwrapped.state
            card = lambda c: c // 13 * 8 + ranks.index(c % 13)  # noqa: E731
            table = frozenset(card(c) for c in state.slots if c >= 0)
            unseen = frozenset(card(c) for c in state.deck[state.next :])
            values = agent.action_values(obs, info["action_mask"])
            from quadrat_env.slots.kernel import GROUPS

            for a, v in values.items():
                group = frozenset(card(state.slots[i]) for i in GROUPS[a])
                kept = table - group
                k = min(len(group), len(unseen))
                draws = list(itertools.combinations(sorted(unseen), k))
                expected = sum(decide(kept | set(d), unseen - set(d)) for d in draws) / len(draws)
                assert v == pytest.approx(expected, abs=1e-12)
            best = agent.act(obs, info["action_mask"])
            assert values[best] >= max(values.values()) - 1e-12
            checked += len(set(values.values())) > 1
        if checked >= 5:
            break
    assert checked >= 5, "too few decisions where the moves differ"


def test_optimal_agent_refuses_what_it_cannot_solve():
    from quadrat_env.agents.zudecken.optimal import OptimalAgent

    with pytest.raises(ValueError, match="use the planner"):
        OptimalAgent("quadrat_env/Zudecken-v0")
    with pytest.raises(ValueError, match="match in suit or rank"):
        OptimalAgent("quadrat_env/Quadrat-v0")


@pytest.mark.parametrize(("n", "win", "cover"), CASES[:3])
def test_the_lean_search_finds_the_same_values_and_keeps_only_the_afterstates(n, win, cover):
    """Lean: only positions with at most two upcards memoised (one int a key), the last two cards
    of a refill drawn together; the same optimum, and exactly the full search's afterstates."""
    full, lean = ExactSolver(n, win, cover), ExactSolver(n, win, cover, lean=True)
    assert lean.win_rate() == pytest.approx(full.win_rate(), abs=1e-13)
    assert lean.keys.shape[1] == 1
    assert lean.positions == full.census()[:3].sum()  # compact keys tell apart what two-int keys do
    assert (lean.census()[3:] == 0).all()


def test_the_full_table_cache_changes_no_value():
    """Each thread's lossy cache of full tables' values: off (one slot), tiny (two slots, a new table
    evicting the last almost every time) or roomy, and on two threads, the same optimum to the bit."""
    values = {  # 5 ranks: the roomy cache halves the solve's time, so it is used (6 ranks: 4 times as long)
        (slots, threads): ExactSolver(5, lean=True, threads=threads, cache_slots=slots).win_rate()
        for slots in (1, 2, 1 << 16)
        for threads in (1, 2)
    }
    assert len(set(values.values())) == 1, values
    assert values[1, 1] == pytest.approx(KNOWN[5], abs=1e-12)


def test_lean_late_positions_agree_with_the_brute_force():
    lean = ExactSolver(13, lean=True)
    decide = brute_force(13, True, 4)
    mask = lambda cs: sum(1 << c for c in cs)  # noqa: E731
    for table, unseen in late_positions(ExactSolver(13), np.random.default_rng(3), 20, stock=8):
        assert lean.value(mask(table), mask(unseen)) == pytest.approx(decide(table, unseen), abs=1e-12)
