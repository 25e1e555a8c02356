"""Package discovery; everything else is in pyproject.toml.

Every package under ``quadrat_env/``, ``agents/`` and ``experiments/`` is found here (the last two are
installed as ``quadrat_env.agents`` and ``quadrat_env.experiments``, see ``package-dir``), so a new
game folder cannot be left out of the wheel. ``scripts/`` and ``tests/`` are not installed.
"""

from setuptools import find_packages, setup

packages = find_packages(include=["quadrat_env", "quadrat_env.*"])
for folder in ("agents", "experiments"):
    packages += [f"quadrat_env.{folder}"] + [f"quadrat_env.{folder}.{p}" for p in find_packages(folder)]
# folders of data only (pyproject's package-data), named so that setuptools installs them quietly
packages += ["quadrat_env.experiments.hyperparams", "quadrat_env.experiments.models",
             "quadrat_env.experiments.models.configs"]  # fmt: skip

setup(packages=packages)
