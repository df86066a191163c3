# Two entry points for a new user (see README): `make demo` and `make test`.
# Both create .venv and install paramine first; the install reruns only when
# pyproject.toml changes.

VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
# On 2-core machines spinning OpenMP threads made torch 5-27x slower.
export OMP_WAIT_POLICY := PASSIVE
export TOKENIZERS_PARALLELISM := false
export HF_HUB_OFFLINE := 1
# The install leaves bytecode to the first import, as uv does by default:
# pip compiled all 25,000 modules it installs, 58 of the install's 103 s
# here, where a run imports about 5,000. So make's commands
# write bytecode even where the environment says not to (this VM sets
# PYTHONDONTWRITEBYTECODE=1), or each process would compile what it imports
# anew: 18 s against 7 s to import the stack.
export PYTHONDONTWRITEBYTECODE :=

.PHONY: setup demo test test-fast lint bytecode
setup: $(VENV)/.installed

# uv installs the environment: 22-35 s against pip's 85-96 s here, the same
# packages at the same versions (docs/results.md). It reads no pip
# configuration, so the machine's (local wheels, a mirror, constraints) is
# passed on as flags (deploy/uv_flags.py). torch pinned: it resolves to the
# CPU wheel where the machine has one; a bare `torch` requirement would pull
# several GB of CUDA packages. A torch already in .venv that meets the pin
# (a CUDA build) is kept.
UV_VERSION := 0.13.9
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet uv==$(UV_VERSION)
	$(BIN)/uv pip install --quiet --python $(BIN)/python \
	    $$($(BIN)/python -m pip config list | $(BIN)/python deploy/uv_flags.py) \
	    torch==2.13.0 -e ".[dev]"
	touch $@

demo: setup
	$(BIN)/paramine mine --overwrite

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy -p paramine.schemas -p paramine.encoders -p paramine.pipelines

# mypy cannot follow setuptools' editable finder, which maps paramine.* onto
# the root folders; a tree of links gives it the installed names.
MYPY_TREE := build/mypy/paramine
lint: export MYPYPATH := build/mypy
lint: $(MYPY_TREE)
$(MYPY_TREE):
	mkdir -p $@
	for p in pipelines encoders schemas; do ln -sfn ../../../$$p $@/$$p; done

# Two workers, each test file on one (--dist loadfile: a file's module-scoped
# fixtures are built once, not once per worker; the costly session fixtures
# once a run: tests/run_once.py), handed out in the order tests/tiers.py
# gives, the slowest files first (--no-loadscope-reorder: xdist's own order,
# most tests first, hands a one-test file of two minutes out near the end,
# to one worker while the other may have nothing left). TEST_WORKERS=0 runs
# the tests in this process, as plain pytest does. --durations prints the
# 25 slowest steps, so a CI log says where the suite's time goes.
TEST_WORKERS ?= 2
test: setup
	$(MAKE) -j2 lint bytecode
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=25

# The inner loop: the unit tests only, in this process (tests/tiers.py): no
# test marked pipeline, slow, browser or gpu, and a test that starts a Beam
# pipeline or another process fails. No lint: `make test` runs everything.
test-fast: setup
	$(BIN)/python -m pytest --fast -n $(TEST_WORKERS) --dist loadfile -q --durations=10

# Collecting the tests imports what they import, so its bytecode is written
# on the core mypy leaves idle, not by both test workers at once as they start
# (collection: 26 s with no bytecode, 10 s with it).
bytecode: setup
	$(BIN)/python -m pytest --collect-only -q -p no:cacheprovider > /dev/null
