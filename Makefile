# The two commands of the README: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
HB     := $(VENV)/bin/hb
STAMP  := $(VENV)/.installed

.PHONY: install run test smoke paper bench lock clean-outputs

# requirements.lock pins the exact versions CI used; it constrains the install so a fresh machine
# gets the same environment (`make lock` rewrites it from the current .venv).
$(STAMP): pyproject.toml requirements.lock
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c requirements.lock -e '.[dev]'
	$(PY) -m ipykernel install --sys-prefix --name python3 > /dev/null
	@touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(HB) run --profile default

test: $(STAMP)
	$(PY) -m pytest -q

smoke: $(STAMP)
	$(HB) run --profile smoke

paper: $(STAMP)
	$(HB) run --profile paper

bench: $(STAMP)
	$(PY) bench/run_all.py

lock: $(STAMP)
	$(PY) -m pip freeze --exclude-editable | grep -v '^-e' > requirements.lock

clean-outputs:
	rm -rf outputs/smoke outputs/default outputs/paper outputs/interactive
