# INA testbed. The two commands a newcomer needs: `make run` and `make test`.
# Every target that needs Python first runs `setup`, which works on a fresh machine:
# Debian packages when root (mininet, iproute2, ethtool, tcpdump), a venv, pinned pip packages.

PYTHON      ?= python3
VENV        ?= .venv
BIN         := $(VENV)/bin
PY          := $(BIN)/python
OUT         ?= out
APT_PKGS    := mininet iproute2 ethtool tcpdump iputils-ping
SETUP_STAMP := $(VENV)/.setup-done
PYTEST_ARGS ?=

.PHONY: all setup system-packages run test build bench-switch clean help

all: help

help:
	@echo "make run           run the default experiment on the embedded target"
	@echo "make test          set up and run the test suite"
	@echo "make build         compile p4src/*.p4 to $(OUT)/ (p4c-bm2-ss if on PATH, else the embedded compiler)"
	@echo "make bench-switch  switch packets/s benchmark; writes bench/switch.md"
	@echo "make clean         remove build outputs and emulation leftovers"

# --- setup -------------------------------------------------------------------------------------------------

setup: $(SETUP_STAMP)

$(SETUP_STAMP): pyproject.toml requirements.lock
	@$(MAKE) --no-print-directory system-packages
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -r requirements.lock
	$(BIN)/pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	@touch $@

# Debian packages: installed only when running as root and something is missing.
system-packages:
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then echo "note: not root, not installing:$$missing (network tests will be skipped)"; exit 0; fi; \
	echo "apt-get install$$missing"; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null

# --- main commands -----------------------------------------------------------------------------------------

run: setup
	@echo "make run: the all-reduce experiment is not available yet (see the issue tracker)."

test: setup
	$(PY) -m pytest -q $(PYTEST_ARGS)

bench-switch: setup
	$(PY) -m switch.bench --out bench/switch.md

clean:
	rm -rf $(OUT) .pytest_cache
	-command -v mn >/dev/null 2>&1 && mn -c >/dev/null 2>&1 || true
