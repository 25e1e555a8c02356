"""The published model is the seed chosen on validation deals; every seed stays findable by its number."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("yaml")

from quadrat_env.experiments import publish  # noqa: E402
from quadrat_env.experiments.common import committed  # noqa: E402

ZU = "quadrat_env/Zudecken-v0"
STEM = "Zudecken-ppo_jax"


def _models(tmp_path, rates: dict[int, float | None]):
    """A models folder with seed 0 published and the others in seeds/, each with its summary."""
    models = tmp_path / "models"
    (models / "seeds").mkdir(parents=True)
    (models / "configs").mkdir()
    for seed, rate in rates.items():
        path = models / f"{STEM}.zip" if seed == 0 else models / "seeds" / f"{STEM}-seed{seed}.zip"
        path.write_bytes(f"model of seed {seed}".encode())
        summary = {"test_win_rate": 0.9} if rate is None else {"val_win_rate": rate, "test_win_rate": 0.0}
        (models / "configs" / f"{STEM}-seed{seed}-summary.json").write_text(json.dumps(summary))
    return models


def _holds(models, seed: int) -> bytes:
    return committed.seed_path(models, STEM, seed).read_bytes()


def test_best_publishes_the_seed_with_the_best_validation_rate_and_keeps_every_seed(tmp_path, capsys):
    # seed 2 has the best held-out (test) rate, seed 1 the best validation rate: validation decides
    models = _models(tmp_path, {0: 0.10, 1: 0.30, 2: 0.20})
    assert committed.model_paths(ZU, "ppo_jax", models) == [
        (0, models / f"{STEM}.zip"), (1, models / "seeds" / f"{STEM}-seed1.zip"),
        (2, models / "seeds" / f"{STEM}-seed2.zip")]  # fmt: skip
    assert publish.main(["--best", STEM, "--models", str(models)]) == 0
    assert "seed 1 is the published model" in capsys.readouterr().out
    assert (models / f"{STEM}.zip").read_bytes() == b"model of seed 1"  # what users load
    assert committed.published_seeds(models) == {STEM: 1}
    assert [s for s, _ in committed.model_paths(ZU, "ppo_jax", models)] == [
        0,
        1,
        2,
    ]  # no seed lost or doubled
    assert all(_holds(models, s) == f"model of seed {s}".encode() for s in (0, 1, 2))
    assert not (models / "seeds" / f"{STEM}-seed1.zip").exists()
    assert publish.main(["--best", STEM, "--models", str(models)]) == 0  # again: nothing changes
    assert all(_holds(models, s) == f"model of seed {s}".encode() for s in (0, 1, 2))
    # a better seed 0 later (say, re-published): back to seed 0, and the index forgets the name
    (models / "configs" / f"{STEM}-seed0-summary.json").write_text(json.dumps({"val_win_rate": 0.5}))
    publish.main(["--best", STEM, "--models", str(models)])
    assert committed.published_seeds(models) == {}
    assert all(_holds(models, s) == f"model of seed {s}".encode() for s in (0, 1, 2))


def test_ties_go_to_the_lowest_seed(tmp_path):
    assert committed.best_seed(_models(tmp_path, {0: 0.2, 1: 0.3, 2: 0.3}), STEM) == 1


@pytest.mark.parametrize(
    ("rates", "extra", "message"),
    [({0: 0.1, 1: None}, None, "seed 1: its summary has no validation win rate"),
     ({0: 0.1, 1: 0.2}, "monitor", "Monitor logs"), ({}, None, "no committed seed"),
     ({0: 0.1, 1: 0.2}, "init", "Zudecken-td_ppo-seed0.yml started from Zudecken-ppo_jax.zip")],
)  # fmt: skip
def test_best_refuses_what_it_cannot_choose_and_changes_nothing(tmp_path, capsys, rates, extra, message):
    models = _models(tmp_path, rates)
    if extra == "monitor":  # SB3 runs' learning curves: the published seed's own Monitor logs
        (models / "monitor" / STEM).mkdir(parents=True)
    if extra == "init":  # another run's record names the published file: it must stay what it was
        (models / "configs" / "Zudecken-td_ppo-seed0.yml").write_text(
            f"init: experiments/models/{STEM}.zip\n"
        )
    before = sorted((p, p.read_bytes()) for p in models.rglob("*") if p.is_file())
    with pytest.raises(SystemExit) as stop:
        publish.main(["--best", STEM, "--models", str(models)])
    assert stop.value.code == 2 and message in capsys.readouterr().err
    assert sorted(
        (p, p.read_bytes()) for p in models.rglob("*") if p.is_file() and ".lock" not in p.name
    ) == [x for x in before if ".lock" not in x[0].name]


@pytest.mark.parametrize("text", ["Zudecken-rl: -1\n", "- 3\n", "Zudecken-rl: '2'\n", "a: [\n"])
def test_a_damaged_index_is_named_not_guessed(tmp_path, text):
    (tmp_path / committed.INDEX).write_text(text)
    with pytest.raises(ValueError, match="published.yml"):
        committed.published_seeds(tmp_path)


def test_publish_needs_runs_or_best(capsys):
    with pytest.raises(SystemExit) as stop:
        publish.main([])
    assert stop.value.code == 2 and "--best" in capsys.readouterr().err
