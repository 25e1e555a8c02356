"""The Zudecken study: imitation of the solver's labels and of the exact values, regret, how well the
game can be played, the bracket on its optimum, the planner's curve."""

import json
from pathlib import Path
from typing import Any

#: This study's commands in ``quadrat`` (``experiments.cli``): name -> (module, one line of help).
COMMANDS = {
    "exact": (
        "quadrat_env.experiments.zudecken.exact_values",
        "the exact optimum of Zudecken, 4 to 13 ranks a suit (resumable)",
    ),
}

#: The committed results (beside ``experiments/`` in the repository).
RESULTS = Path(__file__).resolve().parents[2] / "results"


def readme_sections(result: dict[str, Any]) -> list[tuple[tuple[str, str], str]]:
    """The README's headline from a benchmark result: the figure of each player's share of the
    optimum (``figures`` draws it) and what it shows (``.headline``)."""
    from quadrat_env.experiments.zudecken.headline import HEADLINE, readme_figure

    return [(HEADLINE, readme_figure(result))]


def page_sections(result: dict[str, Any]) -> list[tuple[tuple[str, str], str]]:
    """The benchmark page's Zudecken table: every player's win rate beside the exact optimum."""
    from quadrat_env.experiments.zudecken.headline import TABLE, headline

    return [(TABLE, headline(result))]


def figures(result: dict[str, Any], folder: Path) -> None:
    """The study's figures of a benchmark result, drawn into ``folder``."""
    from quadrat_env.experiments.zudecken.headline import FIGURE, share_figure

    share_figure(result, folder / FIGURE)


def exact_optima(results: Path = RESULTS) -> dict[str, float]:
    """The 52-card optimum once the exact search has computed it (``exact`` in
    ``zudecken_optimum.json``, from ``.exact_values``); the 32-card one the optimal agent computes."""
    path = results / "zudecken_optimum.json"
    if not path.is_file():  # an installed package, without the repository's results
        return {}
    try:
        exact = json.loads(path.read_text(encoding="utf-8")).get("exact")
    except (ValueError, AttributeError) as err:
        raise ValueError(f"{path} is not a readable optimum file: {err}") from None
    if exact is None:
        return {}
    if isinstance(exact, bool) or not isinstance(exact, float | int) or not 0 <= exact <= 1:
        raise ValueError(f"{path}: 'exact' must be a win rate in [0, 1], got {exact!r}")
    return {"quadrat_env/Zudecken-v0": float(exact)}
