# The two commands of the README: `make run` and `make test`; `make lab` to read and run the notebooks.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
HB     := $(VENV)/bin/hb
STAMP  := $(VENV)/.installed

.PHONY: install run test lint lab smoke paper bench lock clean-outputs strip-filter

# requirements.lock pins the exact versions CI used; it constrains the install so a fresh machine
# gets the same environment (`make lock` rewrites it from the current .venv).
$(STAMP): pyproject.toml requirements.lock
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c requirements.lock -e '.[dev]'
	$(PY) -m ipykernel install --sys-prefix --name python3 > /dev/null
	@$(MAKE) --no-print-directory strip-filter
	$(HB) warmup
	@touch $(STAMP)

# Notebooks are safe to run in place: .gitattributes sends notebooks/*.ipynb through nbstripout when git
# stores them, so outputs JupyterLab autosaves never reach a commit (cell ids kept). Outside a git checkout
# there is nothing to configure.
# The refresh records the stat data of the notebooks as checked out (compared as they are, filter `cat`): a fresh
# clone's index is written in the second its files are, so git would otherwise run nbstripout on every notebook
# at the next `git status` (hb run's, 27 CPU-s measured on 2026-12-04); a notebook that differs stays to be checked.
strip-filter:
	@if git -C "$(CURDIR)" rev-parse --git-dir > /dev/null 2>&1; then \
	  git -C "$(CURDIR)" config filter.nbstripout.clean "'$(CURDIR)/$(VENV)/bin/nbstripout' --keep-id" && \
	  git -C "$(CURDIR)" config filter.nbstripout.smudge cat && \
	  git -C "$(CURDIR)" -c filter.nbstripout.clean=cat update-index -q --really-refresh > /dev/null 2>&1; \
	  echo "notebooks: outputs are stripped when git stores them (nbstripout filter configured)"; fi

install: $(STAMP)

# Two notebooks at a time, longest first (params/default/expected_seconds.json), as make paper: a notebook's start,
# imports, figures and page use one core, so one at a time left the other idle (a one-at-a-time run used 213 CPU-s
# in 357 s of wall on 2 cores, 2026-12-04). The numbers do not depend on RUN_JOBS.
RUN_JOBS ?= 2
run: $(STAMP)
	$(HB) run --profile default --jobs $(RUN_JOBS)

# Two pytest workers (pytest-xdist), one test file each at a time: the notebooks' smoke run (its own two
# jobs) overlaps the rest of the suite instead of leaving a core idle while single-process tests run.
# A narrower run needs no workers: .venv/bin/python -m pytest -q tests/test_stats.py
TEST_WORKERS ?= 2
test: lint
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile

lint: $(STAMP)
	$(VENV)/bin/ruff check lib tests bench notebooks

# JupyterLab from the project's .venv, on the whole workbook (notebooks/, outputs/, data/), with the
# project's kernel (the python3 kernelspec that install puts into the .venv). Extra options go in
# LAB_ARGS, e.g. make lab LAB_ARGS="--no-browser --ip=127.0.0.1 --port=8899". Jupyter refuses to run
# as root unless told; containers often run as root, so there the target adds --allow-root.
LAB_ARGS ?=
lab: $(STAMP)
	$(VENV)/bin/jupyter lab --ServerApp.root_dir="$(CURDIR)" $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

smoke: $(STAMP)
	$(HB) run --profile smoke

# Two notebooks at a time, longest first (params/paper/expected_seconds.json, then the last manifest), so both
# cores stay busy; the numbers do not depend on PAPER_JOBS. Notebooks whose grids use loky share the cores.
PAPER_JOBS ?= 2
paper: $(STAMP)
	$(HB) run --profile paper --jobs $(PAPER_JOBS)

bench: $(STAMP)
	$(PY) bench/run_all.py

lock: $(STAMP)
	$(PY) -m pip freeze --exclude-editable | grep -v '^-e' > requirements.lock

clean-outputs:
	rm -rf outputs/smoke outputs/default outputs/paper outputs/interactive
