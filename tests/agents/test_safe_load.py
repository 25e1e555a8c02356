"""Model files are code: the project's loading of a user-supplied model runs nothing from the file."""

from __future__ import annotations

import base64
import json
import pathlib
import zipfile

import cloudpickle
import pytest
from quadrat_env.agents.safe_load import UnsafeModelFile, load_model
from quadrat_env.agents.sb3_agent import SB3Agent
from quadrat_env.experiments.publish import MODELS

ZU = "quadrat_env/Zudecken-v0"


class Payload:
    """Unpickling this touches a file: the stand-in for any code a crafted model could run."""

    def __init__(self, marker: pathlib.Path) -> None:
        self.marker = marker

    def __reduce__(self):  # noqa: ANN204
        return (pathlib.Path.touch, (self.marker,))


def crafted(tmp_path: pathlib.Path, field: str) -> tuple[pathlib.Path, pathlib.Path]:
    """The committed Zudecken model with ``field`` replaced by a pickled payload."""
    marker = tmp_path / f"ran-{field}"
    source, target = MODELS / "Zudecken-maskable_ppo.zip", tmp_path / f"crafted-{field}.zip"
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(target, "w") as dst:
        for item in src.namelist():
            content = src.read(item)
            if item == "data":
                data = json.loads(content)
                blob = base64.b64encode(cloudpickle.dumps(Payload(marker))).decode()
                data[field] = {":type:": "<class 'object'>", ":serialized:": blob}
                content = json.dumps(data).encode()
            dst.writestr(item, content)
    return target, marker


def test_the_payload_is_real_when_sb3_unpickles_the_file(tmp_path):
    path, marker = crafted(tmp_path, "lr_schedule")
    load_model(path, "maskable_ppo", ZU, trust=True)  # SB3's own loading: it unpickles the field
    assert marker.exists()  # so the tests below would notice it running


def test_a_payload_in_a_field_we_supply_never_runs(tmp_path):
    path, marker = crafted(tmp_path, "lr_schedule")
    agent = SB3Agent.load(path, "maskable_ppo", ZU)
    assert not marker.exists() and agent.model.observation_space.shape == (269,)


def test_a_payload_in_any_other_field_is_refused(tmp_path):
    path, marker = crafted(tmp_path, "evil")
    with pytest.raises(UnsafeModelFile, match="'evil' is a pickle"):
        SB3Agent.load(path, "maskable_ppo", ZU)
    assert not marker.exists()


def test_a_model_for_another_env_is_named(tmp_path):
    with pytest.raises(ValueError, match="another env"):
        SB3Agent.load(MODELS / "Zudecken-maskable_ppo.zip", "maskable_ppo", "quadrat_env/Quadrat-v0")
    (tmp_path / "x.zip").write_text("not a zip")
    with pytest.raises(ValueError, match="not a saved SB3 model"):
        SB3Agent.load(tmp_path / "x.zip", "ppo", ZU)


@pytest.mark.parametrize("algo", ["a2c", "dqn", "trpo", "qrdqn"])
def test_other_algorithms_load_without_unpickling(algo, tmp_path):
    import gymnasium as gym
    from quadrat_env.agents.safe_load import algorithm, safe_custom_objects

    cls, env = algorithm(algo), gym.make("quadrat_env/Quadrat-v0")
    kwargs = {"n_steps": 32} if algo in ("a2c", "trpo") else {"learning_starts": 0}
    if algo == "trpo":
        kwargs["batch_size"] = 32
    cls("MlpPolicy", env, seed=0, **kwargs).learn(64).save(tmp_path / "m.zip")
    custom = safe_custom_objects(tmp_path / "m.zip", algo, "quadrat_env/Quadrat-v0")
    data = json.loads(zipfile.ZipFile(tmp_path / "m.zip").read("data"))
    pickled = {k for k, v in data.items() if isinstance(v, dict) and ":serialized:" in v}
    assert pickled <= set(custom)  # every pickled field is supplied: nothing is unpickled
    agent = SB3Agent.load(tmp_path / "m.zip", algo, "quadrat_env/Quadrat-v0")
    obs, info = env.reset(seed=1)
    assert env.action_space.contains(int(agent.predict(obs, action_masks=info["action_mask"])[0]))


def test_committed_zudecken_models_name_the_installed_features_module():
    """SB3's own MaskablePPO.load imports what the file names: it must be the installed package's
    module, not the repository-only ``agents.zudecken.features``."""
    import re
    import zipfile
    from pathlib import Path

    from sb3_contrib import MaskablePPO

    models = Path(__file__).resolve().parents[2] / "experiments" / "models"
    paths = [models / "Zudecken-maskable_ppo.zip", *sorted((models / "seeds").glob("Zudecken-maskable*.zip"))]
    for path in paths:
        data = zipfile.ZipFile(path).read("data").decode()
        assert re.search(r"(?<!quadrat_env\.)agents\.features", data) is None
    model = MaskablePPO.load(models / "Zudecken-maskable_ppo.zip", device="cpu")
    assert type(model.policy.features_extractor).__module__ == "quadrat_env.agents.zudecken.features"


@pytest.mark.parametrize(
    ("name", "algo"),
    [
        ("Zudecken-ppo", "ppo"),
        ("Zudecken-maskable_ppo", "maskable_ppo"),
        ("Quadrille-ppo", "ppo"),
        ("Quadrat-maskable_ppo", "maskable_ppo"),
    ],
)
def test_the_algorithm_is_read_from_the_file(name, algo):
    from pathlib import Path

    from quadrat_env.agents.safe_load import algo_of

    models = Path(__file__).resolve().parents[2] / "experiments" / "models"
    assert algo_of(models / f"{name}.zip") == algo
    agent = SB3Agent.load(models / f"{name}.zip", None, f"quadrat_env/{name.split('-')[0]}-v0")
    assert type(agent.model).__name__.lower().replace("maskableppo", "maskable_ppo") == algo


def test_a_shipped_model_by_name_needs_no_algo(capsys, tmp_path):
    from quadrat_env.experiments import compare

    argv = ["--env", "Zudecken", "--model", "Zudecken-maskable_ppo", "--deals", "3", "--baselines",
            "--no-progress", "--no-optimum", "--out", str(tmp_path)]  # fmt: skip
    assert compare.main(argv) == 0
    assert "| Zudecken-maskable_ppo | 3 |" in capsys.readouterr().out


def test_the_bytes_checked_are_the_bytes_loaded(tmp_path, monkeypatch):
    """A file swapped for a hostile copy between the check and the load: the checked bytes load."""
    from quadrat_env.agents import safe_load

    path = tmp_path / "model.zip"
    path.write_bytes((MODELS / "Zudecken-maskable_ppo.zip").read_bytes())
    hostile, marker = crafted(tmp_path, "evil")
    check = safe_load.safe_custom_objects

    def check_then_swap(*args, **kwargs):
        custom = check(*args, **kwargs)
        path.write_bytes(hostile.read_bytes())  # the swap, right after the check
        return custom

    monkeypatch.setattr(safe_load, "safe_custom_objects", check_then_swap)
    model = load_model(path, "maskable_ppo", ZU)
    assert not marker.exists() and model.observation_space.shape == (269,)
