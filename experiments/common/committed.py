"""Where the committed models are, seed by seed (the benchmark, the plots and publish read it here).

``models/<Name>-<kind>.zip`` is the published model: the one ``SB3Agent.load`` and ``quadrat-bench
--model`` users pick up. It is training seed 0 unless ``models/published.yml`` names another seed
(``publish --best`` writes it there: the seed that won the most validation deals). The other seeds
are ``models/seeds/<Name>-<kind>-seed<k>.zip``; each seed's config and records are
``models/configs/<Name>-<kind>-seed<k>*``, whichever file holds its model.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from quadrat_env.registry import short_name as env_name

#: The published seeds that are not seed 0, ``<Name>-<kind>: seed`` (a missing file: all seed 0).
INDEX = "published.yml"
_HEADER = (
    "# The training seed of each published model <Name>-<kind>.zip that is not seed 0: the seed that\n"
    "# won the most validation deals (python -m quadrat_env.experiments.publish --best <Name>-<kind>).\n"
)


def published_seeds(models: Path) -> dict[str, int]:
    """``<Name>-<kind>`` -> the training seed of its published model, where it is not seed 0."""
    import yaml

    path = models / INDEX
    if not path.is_file():
        return {}
    try:
        index = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as err:
        raise ValueError(f"{path}: not YAML ({err})") from None
    if not isinstance(index, dict) or not all(
        isinstance(k, str) and type(v) is int and v >= 0 for k, v in index.items()
    ):
        raise ValueError(f"{path}: expected '<Name>-<kind>: seed' lines, each seed a whole number >= 0")
    return index


def published_seed(models: Path, stem: str) -> int:
    """The training seed of the published model ``models/<stem>.zip``."""
    return published_seeds(models).get(stem, 0)


def seed_path(models: Path, stem: str, seed: int) -> Path:
    """The file that holds training seed ``seed``'s model of ``stem`` (``<Name>-<kind>``)."""
    published = published_seed(models, stem)
    return models / f"{stem}.zip" if seed == published else models / "seeds" / f"{stem}-seed{seed}.zip"


def model_paths(env_id: str, kind: str, models: Path) -> list[tuple[int, Path]]:
    """Every committed training seed's model of ``kind`` on ``env_id``, as (seed, file), by seed."""
    return seed_files(models, f"{env_name(env_id)}-{kind}")


def seed_files(models: Path, stem: str) -> list[tuple[int, Path]]:
    """Every committed training seed's model of ``stem`` (``<Name>-<kind>``), as (seed, file), by seed."""
    found = [(published_seed(models, stem), models / f"{stem}.zip")]
    found += [(int(p.stem.rsplit("seed", 1)[1]), p) for p in (models / "seeds").glob(f"{stem}-seed*.zip")
              if re.fullmatch(rf"{re.escape(stem)}-seed\d+", p.stem)]  # fmt: skip
    return sorted((s, p) for s, p in found if p.is_file())


def validation_win_rates(models: Path, stem: str) -> dict[int, float]:
    """Each committed seed's win rate on its run's validation deals (its summary's ``val_win_rate``:
    the last evaluation, of the weights the run saved); never the held-out test deals."""
    rates = {}
    for seed, _ in seed_files(models, stem):
        path = models / "configs" / f"{stem}-seed{seed}-summary.json"
        summary = json.loads(path.read_text()) if path.is_file() else None
        rate = summary.get("val_win_rate") if isinstance(summary, dict) else None
        if not isinstance(rate, int | float):
            raise ValueError(f"{stem} seed {seed}: its summary has no validation win rate (val_win_rate)")
        rates[seed] = float(rate)
    return rates


def best_seed(models: Path, stem: str) -> int:
    """The committed seed of ``stem`` with the highest validation win rate (ties: the lowest seed)."""
    rates = validation_win_rates(models, stem)
    if not rates:
        raise ValueError(f"{stem}: no committed seed in {models}")
    return max(rates, key=lambda seed: (rates[seed], -seed))


def promotion(models: Path, stem: str, seed: int) -> dict[Path, bytes | None]:
    """The file changes that make training seed ``seed`` the published ``models/<stem>.zip`` (the
    previously published seed moves to ``seeds/``; ``quadrat_env.journal.replace_all`` applies them)."""
    import yaml

    if (models / "monitor" / stem).is_dir():  # the learning curves plot these as the published run's
        raise ValueError(f"{stem}: its Monitor logs are seed {published_seed(models, stem)}'s run; "
                         "the published seed of a model with Monitor logs stays")  # fmt: skip
    for config in sorted((models / "configs").glob("*.yml")):  # a run started from the file names it
        data = yaml.safe_load(config.read_text()) if config.is_file() else None
        init = data.get("init") if isinstance(data, dict) else None
        if init and Path(str(init)).name == f"{stem}.zip":
            raise ValueError(f"{stem}: {config.name} started from {stem}.zip; the published seed stays")
    old, main, index = published_seed(models, stem), models / f"{stem}.zip", published_seeds(models)
    if seed == old:
        return {}
    new_path = models / "seeds" / f"{stem}-seed{seed}.zip"
    if not new_path.is_file() or not main.is_file():
        raise ValueError(f"{stem}: no committed model of seed {seed} ({new_path})")
    index = {k: v for k, v in index.items() if k != stem} | ({stem: seed} if seed else {})
    text = _HEADER + (yaml.safe_dump(dict(sorted(index.items()))) if index else "")
    return {main: new_path.read_bytes(), models / "seeds" / f"{stem}-seed{old}.zip": main.read_bytes(),
            new_path: None, models / INDEX: text.encode()}  # fmt: skip
