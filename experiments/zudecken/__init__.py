"""The Zudecken study: imitation of the solver's labels and of the exact values, regret, how well the
game can be played, the bracket on its optimum, the planner's curve."""

from typing import Any


def readme_sections(result: dict[str, Any]) -> list[tuple[tuple[str, str], str]]:
    """The README's headline table from a benchmark result (``.headline``)."""
    from quadrat_env.experiments.zudecken.headline import HEADLINE, headline

    return [(HEADLINE, headline(result))]
