# Everything runs in a local virtual environment built from pyproject.toml + constraints.txt.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup pip-setup benchmark demo test lint docs docs-check clean

setup: $(STAMP)

EXTRAS := .[train,dev,docs,render,human,frameworks,ray,jax]
# uv installs the same pinned set as pip (constraints.txt) in a fraction of the time: from a fresh
# clone here 14-16 s against 92-98 s. uv does not read pip's settings, so pip's configured wheel folders
# (find-links: where a machine keeps its CPU torch) are passed on. Where uv cannot be had or fails,
# pip installs as before.
LINKS := $(or $(PIP_FIND_LINKS),$(shell $(PYTHON) -m pip config get global.find-links 2>/dev/null))
UV_LINKS := $(foreach d,$(LINKS),--find-links $(d))

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	( $(PY) -m pip install --quiet -c constraints.txt uv && \
	  $(VENV)/bin/uv pip install --quiet --python $(PY) $(UV_LINKS) -c constraints.txt -e "$(EXTRAS)" ) || \
	$(MAKE) pip-setup
	touch $(STAMP)

# setuptools' editable install of a project whose subpackages live in other folders (agents/,
# experiments/) always ends with an informational "Editable installation" warning (folders named
# like the package may shadow it: true of any editable install run from the project folder);
# it is only that message that is silenced, nothing else the build says
pip-setup:
	$(PY) -m pip install --quiet --upgrade pip
	PYTHONWARNINGS="ignore:Editable installation" $(PY) -m pip install --quiet -c constraints.txt -e "$(EXTRAS)"

benchmark: setup
	$(PY) -m quadrat_env.experiments.benchmark --jobs 2

demo: setup
	$(PY) -m quadrat_env.experiments.demo

# One test worker a core (at most 8; pytest-xdist), each test file on one worker, so that its module
# fixtures (a trained model, a built wheel, a solved table) are built once. (Three workers on 2
# cores, for the time the tests wait: 7 min 18 s, against 6 min 59 s with two.)
# The suite starts hundreds of fresh interpreters: each must find the bytecode of what it imports
# (torch, ray, jax, ...) written by the first, or compile it again (a machine may forbid writing it:
# PYTHONDONTWRITEBYTECODE; the suite took 11 min 53 s so, 7 min 32 s with it written)
test: setup
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -q -n auto --maxprocesses 8 --dist loadfile

docs: setup
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

# The built site in headless Chromium (Debian's package: apt-get install chromium): a screenshot of
# every page into runs/docs-check/, sideways scrolling, console errors, and the search.
docs-check: docs
	$(PY) -m pip install --quiet -c constraints.txt playwright
	$(PY) -m scripts.docs_check --site site --out runs/docs-check

lint: setup
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV)
