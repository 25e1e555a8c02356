"""Every seed range the project deals from, declared in one place so they can never overlap.

A deal is ``env.reset(seed=s)``. Training, validation and the benchmark's held-out deals come from
the disjoint ranges below; each command asks this module for its seeds, and a request that would
leave its range (and so reach another's deals) raises ``ValueError``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SeedRange:
    name: str
    start: int
    stop: int

    def take(self, count: int, offset: int = 0) -> range:
        """``count`` seeds from ``start + offset``; refused if they would leave this range."""
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"{self.name}: need a whole number of deals >= 0, got {count!r}")
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ValueError(f"{self.name}: the offset must be a whole number >= 0, got {offset!r}")
        lo = self.start + offset
        if lo + count > self.stop:
            raise ValueError(f"{self.name}: seeds {lo}..{lo + count - 1} leave its range "
                             f"[{self.start}, {self.stop}), into other deals")  # fmt: skip
        return range(lo, lo + count)


#: SB3 training (quadrat_env.experiments.train): env i of a run with seed k is seeded k + i.
RL_TRAINING = SeedRange("RL training", 0, 1_000_000)
#: The demo's measured deals (quadrat_env.experiments.demo, the README's win-rate table).
DEMO = SeedRange("demo deals", 1_000_000, 2_000_000)
#: The planner curve's deals (quadrat_env.experiments.zudecken.planner_curve).
PLANNER_CURVE = SeedRange("planner curve deals", 2_000_000, 3_000_000)
#: Imitation training deals (quadrat_env.experiments.zudecken.imitate): seed k plays from 10^8 * (1 + k).
IMITATION = SeedRange("imitation training", 100_000_000, 900_000_000)
IMITATION_PER_SEED = 100_000_000
#: Validation deals of imitation runs.
VALIDATION = SeedRange("validation", 900_000_000, 1_000_000_000)
#: The benchmark's held-out deals: reset(seed=10**9 + i). Nothing trains or validates on these.
BENCHMARK = SeedRange("benchmark held-out deals", 1_000_000_000, 2_000_000_000)

RANGES = (RL_TRAINING, DEMO, PLANNER_CURVE, IMITATION, VALIDATION, BENCHMARK)


def rl_training(seed: int, n_envs: int) -> range:
    """The seeds of an SB3 run's envs (``make_vec_env(seed=seed)`` seeds env i with seed + i)."""
    return RL_TRAINING.take(n_envs, offset=seed)


def imitation(seed: int, deals: int) -> range:
    """The training deals of imitation seed ``seed`` (its own block of 10^8 seeds)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"imitation seed must be a whole number >= 0, got {seed!r}")
    if deals > IMITATION_PER_SEED:
        raise ValueError(f"imitation: at most {IMITATION_PER_SEED:,} deals per seed, got {deals:,}")
    return IMITATION.take(deals, offset=seed * IMITATION_PER_SEED)
