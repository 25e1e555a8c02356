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
    "ladder": (
        "quadrat_env.experiments.zudecken.ladder",
        "every player on every rung of Zudecken, 4 to 13 ranks, beside the optimum (resumable)",
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


def recorded_optima(results: Path = RESULTS) -> dict[str, float]:
    """Every rung's exact optimum as the exact solver's record holds it (``zudecken_exact.json``,
    from ``.exact_values``): env ID -> win rate; {} without the record (an installed package)."""
    from quadrat_env.registry import rules_for, spec_for

    path = results / "zudecken_exact.json"
    if not path.is_file():
        return {}
    ids = spec_for("quadrat_env/Zudecken-v0").every_id
    return {env_id: rung_optimum(rules_for(env_id).pack_size // 4, path) for env_id in ids}


def rung_optimum(ranks: int, record: Path = RESULTS / "zudecken_exact.json") -> float:
    """The exact optimum of the pack of ``ranks`` ranks a suit, as the exact solver's record holds it
    (never a copied number)."""
    try:
        entry = json.loads(record.read_text(encoding="utf-8"))["ranks"][str(ranks)]
        value = float.fromhex(entry["hex"])
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{record}: no readable optimum for {ranks} ranks ({err})") from None
    if not 0 < value <= 1:
        raise ValueError(f"{record}: the optimum for {ranks} ranks is {value!r}, not a win rate")
    return value
