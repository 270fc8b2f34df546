# delaycv: the two set-up commands of the README are `make run` and `make test`.
# Both create .venv from requirements.lock on first use (Python 3.11, PyPI only).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CORES ?= 2
STAMP := $(VENV)/.delaycv-installed

# Snakemake writes the interpreter's path unquoted into the command of every rule script
# (`<python> <script>`): from a virtualenv whose path holds a space, every job fails (exit 127).
# Stop at once, before anything is created, and say what to do.
VENV_PATH := $(if $(filter /%,$(VENV)),$(VENV),$(CURDIR)/$(VENV))
ifneq ($(words $(VENV_PATH)),1)
$(error the virtualenv's path "$(VENV_PATH)" contains a space: Snakemake writes the interpreter's path unquoted into the command of every rule script, so every job would fail (exit 127). Move the checkout to a path without spaces, or keep the virtualenv elsewhere: make $(or $(MAKECMDGOALS),run) VENV=/path/without/spaces/.venv)
endif

.PHONY: venv run test lint format bench clean-results

# pip reports each package as it goes (a first install takes a few minutes); installing delaycv
# compiles its fold loop (setup.py: Cython and a C compiler; without them the Python loop runs)
# MOA learners (optional, docs/moa-learners.md): the pinned MOA jar (downloaded from PyPI into the
# user's cache; a failure is reported, not fatal: river learners need none of it) and, with a JDK,
# the Java fold loop
$(STAMP): requirements.lock pyproject.toml setup.py delaycv/engine/_loop.pyx delaycv/metrics/_effort_loop.pyx delaycv/metrics/_corrected_kernel.pyx delaycv/metrics/_fading_sums.pyx delaycv/common/_libm.pyx delaycv/jvm/java/delaycv/jvm/FoldRows.java
	@echo "delaycv: setting up $(VENV): Python, then the pinned packages of requirements.lock"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check --progress-bar off -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@$(BIN)/python -c "from delaycv.engine import compiled; from delaycv.metrics import corrected, effort, states; print('delaycv: the fold loop is', compiled.status()); print('delaycv: the effort-aware measures run', effort.LOOP_STATUS); print('delaycv: the corrected reference runs', corrected.KERNEL_STATUS); print('delaycv: the fading running sums run', states.SUMS_STATUS); from delaycv.common import portable; print('delaycv: exp, log and pow run', portable.STATUS)"
	@$(BIN)/python -m delaycv.jvm.jar install || echo "delaycv: MOA learners are not available (above); river learners are"
	@$(BIN)/python -m delaycv.jvm.build
	touch $(STAMP)
	@echo "delaycv: $(VENV) is ready"

## venv: only the virtualenv (.venv, with the delaycv and snakemake commands)
venv: $(STAMP)

## run: the whole default pipeline (convert, evaluate, merge, tests, figures, report)
run: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/snakemake --cores $(CORES) --profile profiles/default
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/snakemake --cores $(CORES) --profile profiles/default --report results/report.html

## test: lint, format and workflow checks, then the test suite: in parallel on $(CORES) cores
## (pytest-xdist; each test module on one worker, so that its tests share its fixtures and keep
## their order; the longest modules first, tests/conftest.py), then the tests marked `serial`
## (timings) alone; both passes run, and the target fails if either did
PYTEST := PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m pytest
test: $(STAMP) lint
	status=0; \
	$(PYTEST) -n $(CORES) --dist loadscope --no-loadscope-reorder -m "not serial" || status=$$?; \
	$(PYTEST) -m serial || status=$$?; \
	exit $$status

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/snakefmt --check Snakefile workflow/rules
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/snakemake --lint --cores 1

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .
	$(BIN)/snakefmt Snakefile workflow/rules

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean-results:
	rm -rf results/runs results/merged results/tests results/rankings results/figures results/benchmarks results/merged.parquet results/report.html resources/generated logs .snakemake/metadata
