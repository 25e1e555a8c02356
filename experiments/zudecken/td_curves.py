"""The reward-only learner's curves on Zudecken: every published seed, with the exact optimum.

    python -m quadrat_env.experiments.zudecken.td_curves    # writes results/td_curves.png

Reads each published TD run's curve (``experiments/models/configs/<Name>-rl-seed<k>-curve.csv``:
2,000 validation deals every 2M moves) and the exact optimum from the committed benchmark
(``results/benchmark.json``, where known).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from quadrat_env.experiments.benchmark import MODELS, exact_optima

from quadrat_env.arguments import description_of
from quadrat_env.extras import command
from quadrat_env.files import data_files
from quadrat_env.registry import short_name as env_name

GAMES = ("Zudecken32", "Zudecken")


def optima(benchmark: Path) -> dict[str, float]:
    """Each game's exact optimum as the committed benchmark gives it (the optimal agent's, or the
    exact search's once it has solved the pack)."""
    result = json.loads(benchmark.read_text()) if benchmark.is_file() else {"rows": []}
    return {env_name(env_id): value for env_id, value in exact_optima(result).items()}


@command
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=description_of(__doc__))
    p.add_argument("--models", type=Path, default=MODELS)
    p.add_argument("--benchmark", type=Path, default=Path("results/benchmark.json"))
    p.add_argument("--out", type=Path, default=Path("results/td_curves.png"))
    args = p.parse_args(argv)
    if args.out.suffix != ".png":
        p.error(f"--out must end in .png, got {args.out}")
    curves = {game: data_files(args.models / "configs", f"{game}-rl-seed*-curve.csv") for game in GAMES}
    curves = {game: files for game, files in curves.items() if files}
    if not curves:
        p.error(f"no published TD curves in {args.models / 'configs'}")
    from quadrat_env.experiments.common.plots import seed_curves

    args.out.parent.mkdir(parents=True, exist_ok=True)
    seed_curves(curves, args.out, optima(args.benchmark))
    print(f"wrote {args.out}: {', '.join(f'{g} ({len(f)} seed(s))' for g, f in curves.items())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
