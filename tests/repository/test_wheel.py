"""The built wheel works outside the repository: in a fresh venv, from a folder that has its own
``agents`` and ``experiments`` packages, on the installed gymnasium and on gymnasium 1.2 (RLlib's)."""

from __future__ import annotations

import os
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
USER_CODE = {"agents/__init__.py": "MINE = 'the user agents'\n",
             "experiments/__init__.py": "MINE = 'the user experiments'\n"}  # fmt: skip
SMOKE = """
import agents, experiments, gymnasium as gym, numpy as np
import quadrat_env
from gymnasium.utils.env_checker import check_env
from quadrat_env.wrappers import ActionMaskObservation
assert agents.MINE == "the user agents" and experiments.MINE == "the user experiments"
assert "site-packages" in quadrat_env.__file__, quadrat_env.__file__
for env_id in quadrat_env.MAIN_IDS:  # the ladder's rungs: the same classes (every ID: tests/env)
    check_env(gym.make(env_id).unwrapped)
    check_env(ActionMaskObservation(gym.make(env_id)))
    for mode in ("NextStep", "SameStep", "Disabled"):
        venv = gym.make_vec(env_id, num_envs=4, autoreset_mode=mode)
        venv.reset(seed=0)
        for _ in range(60):
            _, _, term, trunc, _ = venv.step(venv.unwrapped.action_masks().argmax(axis=1))
            if mode == "Disabled" and (term | trunc).any():
                venv.reset(options={"reset_mask": term | trunc})
print("gymnasium", gym.__version__, "ok")
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of the files git knows (tracked or new, not ignored), built from a clean copy: an
    in-tree build would reuse the repository's build/ folder, where removed modules may linger."""
    import shutil

    out, source = tmp_path_factory.mktemp("wheel"), tmp_path_factory.mktemp("source") / "quadrat-env"
    tracked = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    for name in filter(None, tracked.decode().split("\0")):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-v",
               "-w", str(out), str(source)]  # fmt: skip
    built = subprocess.run(command, check=True, capture_output=True, text=True)
    (path,) = out.glob("quadrat_env-*.whl")
    BUILD_LOG.append(built.stdout + built.stderr)
    return path


BUILD_LOG: list[str] = []


def test_the_build_is_quiet(wheel):
    """No setuptools warning of the project's own making (data folders are declared as packages)."""
    assert "BuildBackendWarning" not in BUILD_LOG[0] and "SetuptoolsDeprecationWarning" not in BUILD_LOG[0]


def fresh_venv(where: Path, wheel: Path | None, *extra: str, under: Path | None = None) -> Path:
    """A new venv with the wheel (and ``extra`` packages) installed; the other dependencies are
    read from this interpreter's site-packages, behind the venv's own (installing torch anew would
    take minutes). Only the wheel's quadrat_env is importable: the repository's is installed in
    editable mode, which a plain path entry does not activate. ``under``: a venv whose packages (the
    wheel's quadrat_env, with the kernels it compiled and cached) come before this interpreter's."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    python = where / "bin" / "python"
    deps = [*([] if under is None else [purelib(under)]), *site.getsitepackages()]
    Path(purelib(python), "deps-from-the-test-interpreter.pth").write_text("\n".join(deps) + "\n")
    packages = [*([] if wheel is None else [str(wheel)]), *extra]
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-deps", *packages],
                   check=True, capture_output=True)  # fmt: skip
    return python


def purelib(python: Path) -> str:
    return subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()  # fmt: skip


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """One venv with the wheel, for the tests below (its kernels compile once)."""
    return fresh_venv(tmp_path_factory.mktemp("venv") / "venv", wheel)


def run(python: Path, args: list[str], cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    out = subprocess.run([str(python), *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    return out.stdout


@pytest.fixture()
def user_folder(tmp_path) -> Path:
    folder = tmp_path / "user project"
    for name, text in USER_CODE.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def test_the_wheel_claims_only_quadrat_env(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"quadrat_env", wheel.name.split("-py3")[0] + ".dist-info"}
    for shipped in (
        "quadrat_env/agents/solver.py",
        "quadrat_env/experiments/hyperparams/maskable_ppo.yml",
        "quadrat_env/experiments/models/Zudecken-maskable_ppo.zip",
        "quadrat_env/experiments/models/published.yml",  # which seed each shipped model is
    ):
        assert shipped in names


def test_the_wheel_holds_every_package_of_the_repository(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    tops = [ROOT / d for d in ("quadrat_env", "agents", "experiments")]
    code = {p.parent for top in tops for p in top.rglob("*.py")}
    folders = [p.parent for top in tops for p in top.rglob("__init__.py")]
    assert set(folders) == code  # a folder of code without __init__.py would not be found
    for folder in folders:
        rel = folder.relative_to(ROOT).as_posix()
        installed = rel if rel.startswith("quadrat_env") else f"quadrat_env/{rel}"
        assert f"{installed}/__init__.py" in names, rel
    assert not any(n.startswith(("scripts/", "tests/", "quadrat_env/scripts/")) for n in names)


def test_the_wheel_carries_the_license_the_type_marker_and_one_version(wheel):
    import quadrat_env

    archive = zipfile.ZipFile(wheel)
    names = archive.namelist()
    assert "quadrat_env/py.typed" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    meta = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert f"Version: {quadrat_env.__version__}" in meta and "License-Expression: MIT" in meta
    assert "Classifier: Typing :: Typed" in meta
    citation = (ROOT / "CITATION.cff").read_text()
    assert f"version: {quadrat_env.__version__}" in citation
    assert f"## [{quadrat_env.__version__}]" in (ROOT / "CHANGELOG.md").read_text()


def test_installed_wheel_benchmarks_and_trains_beside_the_users_packages(installed, user_folder):
    python = installed
    assert "ok" in run(python, ["-c", SMOKE], user_folder)
    bench = python.parent / "quadrat-bench"
    out = run(bench, ["--env", "Zudecken", "--agent", "greedy", "--deals", "40", "--baselines",
                      "--out", "b1"], user_folder)  # fmt: skip
    assert "| greedy | 40 |" in out
    out = run(bench, ["--env", "Zudecken", "--model", "Zudecken-maskable_ppo", "--algo", "maskable_ppo",
                      "--deals", "40", "--baselines", "greedy", "--out", "b2"], user_folder)  # fmt: skip
    assert "| Zudecken-maskable_ppo | 40 |" in out and "against greedy" in out
    run(python, ["-m", "quadrat_env.experiments.train", "--env", "quadrat_env/Quadrat-v0", "--algo",
                 "maskable_ppo", "--timesteps", "512", "--no-progress"], user_folder)  # fmt: skip
    assert list((user_folder / "runs" / "maskable_ppo").glob("Quadrat-seed0/*.zip"))


def test_installed_wheel_runs_on_gymnasium_1_2(installed, user_folder, tmp_path):
    # the wheel's quadrat_env from the venv above (its kernels cached there), gymnasium 1.2 before it
    python = fresh_venv(tmp_path / "venv", None, "gymnasium==1.2.2", under=installed)
    assert "gymnasium 1.2.2 ok" in run(python, ["-c", SMOKE], user_folder)
    # the batched env's step-by-step equivalence with SyncVectorEnv, on gymnasium 1.2
    vector_tests = ROOT / "tests" / "env" / "test_vector.py"
    run(python, ["-m", "pytest", "-q", "-p", "no:cacheprovider", str(vector_tests)], user_folder)
