# INA testbed. The two commands a newcomer needs: `make run` and `make test`.
# Every target that needs Python first runs `setup`, which works on a fresh machine:
# Debian packages when root (mininet, iproute2, ethtool, tcpdump), a venv, pinned pip packages.

PYTHON      ?= python3
VENV        ?= .venv
BIN         := $(VENV)/bin
PY          := $(BIN)/python
OUT         ?= out
APT_PKGS    := mininet iproute2 ethtool tcpdump iputils-ping iperf3
SETUP_STAMP := $(VENV)/.setup-done
DEB_MININET := /usr/lib/python3/dist-packages/mininet
P4SRC       := $(wildcard p4src/*.p4)
# p4c-bm2-ss when installed (a P4 VM), else the embedded compiler; the same flags and output paths either way.
P4C         ?= $(shell command -v p4c-bm2-ss >/dev/null 2>&1 && echo p4c-bm2-ss || echo "$(PY) -m compiler")
PYTEST_ARGS ?=
BENCH_SWITCH_ARGS ?=
VENV_SHELL  ?= .venv-shell
SCENARIO    ?= experiments/scenarios/size-sweep.toml
# `make run` knobs
PROTO       ?= switchml
ALGO        ?= $(PROTO)
BW          ?=
QUEUE       ?=
WORKERS     ?= 4
SIZE        ?= 65536
LOSS        ?= 0
SPARSITY    ?= 0
SPARSE_OVERLAP ?= 0
SEED        ?= 1
DTYPE       ?= float32
TARGET      ?=
TOPO        ?= star
RACKS       ?= 2
LEVELS      ?= 2
SPINES      ?= 2
FAULTS      ?=
PCAP        ?=
TRACE       ?=
WINDOW_CONTROL ?= fixed
SOAK_RUNS   ?= 1000
FUZZ        ?= 2000
GRPC_ADDR   ?= 127.0.0.1:9559
DEVICE_ID   ?= 0
# TLS=1: P4Runtime over TLS with client auth (make run: a throwaway CA and certificates in TLS_DIR, made once;
# controller-shell / p4runtime-shell: connect with them)
TLS         ?= 0
TLS_DIR     ?= $(OUT)/tls
TLS_ON      := $(filter-out 0,$(TLS))
REPS        ?= 3
# RESUME=results/<dir>: continue the interrupted study that made <dir> (make experiment, figures, multitenant, train)
RESUME      ?=
# what a study stopped by Ctrl-C prints to resume it (experiments.interrupt): this make command with RESUME=<its dir>
RESUME_HINT = INA_MAKE_COMMAND='$(strip make $@ $(filter-out RESUME=%,$(MAKEOVERRIDES)))'

.PHONY: all setup system-packages shell-venv run perf experiment multitenant twolevel soak train torch test-torch figures test build bench bench-loss bench-sim bench-switch validate-sim difftest p4runtime-shell controller-shell clean help

all: help

help:
	@echo "make run           all-reduce through the switch in Mininet; prints which switch it chose and why (knobs PROTO/ALGO"
	@echo "                   WORKERS SIZE LOSS BW=MBIT|auto QUEUE=PACKETS DTYPE SEED TARGET TOPO=star|twotier|leafspine RACKS SPINES LEVELS FAULTS=plan.toml PCAP=1"
	@echo "                   WINDOW_CONTROL=fixed|adaptive SPARSITY=F SPARSE_OVERLAP=F (zero blocks; PROTO=omnireduce skips them)"
	@echo "                   TRACE=1: timeline -> results/trace.json, opens in Perfetto;"
	@echo "                   TLS=1: P4Runtime over TLS with client certificates, CA and certificates in TLS_DIR=out/tls)"
	@echo "make test          set up and run the test suite"
	@echo "make perf          nccl-tests' all_reduce_perf columns for ALGO on WORKERS hosts (BW, PERF_ARGS=\"-b 4K -e 1M -f 4\")"
	@echo "make experiment    run a scenario file (SCENARIO=experiments/scenarios/size-sweep.toml) -> results/<name>-<time>/"
	@echo "                   (engine = \"sim\" in the file: the packet simulator, virtual time, no root; docs/simulator.md)"
	@echo "                   Ctrl-C stops cleanly; RESUME=results/<name>-<time> continues it there (the runs its runs.csv"
	@echo "                   lacks or that failed; SCENARIO may be left out). multitenant, train, figures take RESUME too"
	@echo "make validate-sim  the packet simulator against Mininet: VALIDATE=experiments/scenarios/validate-sim.toml on both"
	@echo "                   engines, compared point by point -> results/validate-<name>-<time>/validation.md (root;"
	@echo "                   VALIDATE_MININET=DIR compares a finished sweep instead of running Mininet again,"
	@echo "                   VALIDATE_SIM=DIR a finished simulation of it instead of simulating again)"
	@echo "make multitenant   JOBS jobs share one switch: every in-network protocol at equal memory (SwitchML's static"
	@echo "                   partition, ATP's shared pool + PS, plug-ins); REPS runs, BW=MBIT|auto, POLICY=\"static atp esa release\""
	@echo "make twolevel      ATP on a two-tier network (RACKS rack switches): two-level vs one-level aggregation; REPS runs"
	@echo "make train         data-parallel training (digits MLP) per algorithm, loss/accuracy plots -> results/"
	@echo "make torch         install PyTorch (CPU) into the venv (optional extra; make test-torch: DDP through the switch)"
	@echo "make soak          SOAK_RUNS seeded all-reduces per protocol with faults, in process: wrong results must be 0"
	@echo "make figures       the docs' scenario figures regenerated and stamped with their commit -> results/readme/"
	@echo "                   (FIGURES_ONLY=\"workers-sweep size-sweep\" for some of them; RESUME=results/figures-<time>)"
	@echo "make controller-shell  interactive controller on a running switch (GRPC_ADDR, DEVICE_ID, TLS=1 with TLS_DIR's"
	@echo "                   CA and client certificate)"
	@echo "make p4runtime-shell   p4runtime-shell (its own venv) on a running switch (GRPC_ADDR, DEVICE_ID, TLS=1)"
	@echo "make build         compile p4src/*.p4 to $(OUT)/ (p4c-bm2-ss if on PATH, else the embedded compiler)"
	@echo "make bench         all-reduce goodput, 2/4/8 workers x 0/1 % loss, then every in-network protocol with 4 and 8"
	@echo "                   workers on 1 and 2 Mbit/s links"
	@echo "                   (BENCH_SLOW=on|off), then the scaling sweep (BENCH_SCALING=default|full|off) (root);"
	@echo "                   writes results/bench/allreduce.*, results/bench/slow-links-*.*, results/bench/scaling.*;"
	@echo "                   BENCH_COMPARE=DIR|REV also runs the grid with another version of the project (a"
	@echo "                   checkout directory or a git revision, e.g. 355f392) and reports the ratios"
	@echo "make bench-loss    4 workers, 0 vs 1 % loss, BENCH_LOSS_REPS=80 pairs (root, ~7 min): whether the 1 % share"
	@echo "                   of loss-free is settled above or below 85 %; writes results/bench/loss-share.*"
	@echo "make bench-sim     the packet simulator at scale: one verified 4 MiB all-reduce per worker at 100 Gbit/s"
	@echo "                   (BENCH_SIM_WORKERS=\"64 256\"), then ATP on 32 racks (BENCH_SIM_TWOTIER_WORKERS=1024,"
	@echo "                   BENCH_SIM_TWOTIER_MIB=0.25): wall time, events/s, peak RSS -> results/bench/sim{,-twotier}.md"
	@echo "make bench-switch  switches side by side (embedded, BMv2 if installed; root) on a family of programs, each"
	@echo "                   compiled by ours and by p4c-bm2-ss if installed: kpps at ~0 % loss and under 3x overload"
	@echo "                   with sender/receiver CPU, SwitchML elements/s, in-process us per frame, the family's"
	@echo "                   minimum and median ratio -> results/bench/switch.{md,csv}, switch-history.csv"
	@echo "                   (BENCH_SWITCH_ARGS=\"--reps 2 --duration 1 --compare CMD\"; BENCH_COMPARE=DIR|REV adds that"
	@echo "                   version's embedded switch)"
	@echo "make difftest      the same frames through the embedded switch and real BMv2 (else p4c's JSON), outputs compared"
	@echo "                   (DIFFTEST_PROGRAMS, TUTORIALS=<p4lang/tutorials checkout>, P4C_SAMPLES=<p4lang/p4c checkout>,"
	@echo "                   DIFFTEST_ARGS)"
	@echo "make docs          build the documentation site (docs/, mkdocs.yml; mkdocs build --strict) -> site/"
	@echo "make clean         remove build outputs and emulation leftovers"

# --- setup -------------------------------------------------------------------------------------------------

setup: $(SETUP_STAMP)

$(SETUP_STAMP): pyproject.toml requirements.lock
	@$(MAKE) --no-print-directory system-packages
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -r requirements.lock
	$(BIN)/pip install -q --disable-pip-version-check --no-deps -e .
	@# Debian's mininet is a pure-Python package for the system python; expose just it to the venv.
	@if [ -d $(DEB_MININET) ]; then \
	  site=$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'); \
	  mkdir -p $(VENV)/debian-mininet && ln -sfn $(DEB_MININET) $(VENV)/debian-mininet/mininet && \
	  echo "$(abspath $(VENV))/debian-mininet" > $$site/debian-mininet.pth; fi
	@touch $@

# Debian packages: installed only when running as root and something is missing.
system-packages:
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then echo "note: not root, not installing:$$missing (network tests will be skipped)"; exit 0; fi; \
	echo "apt-get install$$missing"; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null

# --- main commands -----------------------------------------------------------------------------------------

# p4runtime-shell pins protobuf<3.21, so it lives in a venv of its own (a client of our switch, tested by make test).
shell-venv: $(VENV_SHELL)/.setup-done

$(VENV_SHELL)/.setup-done: tests/switch/runtime/requirements-shell.txt
	@test -x $(VENV_SHELL)/bin/python || $(PYTHON) -m venv $(VENV_SHELL)
	$(VENV_SHELL)/bin/pip install -q --disable-pip-version-check -r $<
	@touch $@

run: build
	$(if $(TLS_ON),$(PY) -m topo.tls $(TLS_DIR))
	$(PY) -m experiments.run --protocol $(ALGO) --workers $(WORKERS) --size $(SIZE) --loss $(LOSS) --dtype $(DTYPE) --seed $(SEED) \
	  --sparsity $(SPARSITY) --sparse-overlap $(SPARSE_OVERLAP) --window-control $(WINDOW_CONTROL) \
	  $(if $(BW),--bw $(BW)) $(if $(QUEUE),--queue $(QUEUE)) $(if $(TARGET),--target $(TARGET)) --topo $(TOPO) --racks $(RACKS) --spines $(SPINES) --levels $(LEVELS) \
	  $(if $(FAULTS),--fault-plan $(FAULTS)) $(if $(filter-out 0,$(PCAP)),--pcap) \
	  $(if $(filter-out 0,$(TRACE)),--trace results/trace.json) $(if $(TLS_ON),--tls $(TLS_DIR)) --program-dir $(OUT)

# nccl-tests' all_reduce_perf columns for any algorithm on the Mininet star (root): PERF_ARGS="-b 4K -e 1M -f 4 -n 3 -w 1"
PERF_ARGS   ?=
perf: build
	$(PY) -m experiments.allreduce_perf --protocol $(ALGO) --workers $(WORKERS) $(if $(BW),--bw $(BW)) \
	  $(if $(TARGET),--target $(TARGET)) --program-dir $(OUT) $(PERF_ARGS)

# SOAK_RUNS seeded all-reduces per protocol in process, with loss, duplication, reordering, stragglers, then FUZZ
# fuzzed frames per program (+ P4Runtime requests, P4 sources, BMv2 JSON in proportion, or FUZZ_REQUESTS,
# FUZZ_SOURCES, FUZZ_JSONS)
# -> prints runs / faults / wrong results / crashes / fuzz totals and the replay command of any failure
soak: build
	$(PY) -m experiments.soak --runs $(SOAK_RUNS) --fuzz $(FUZZ) --seed $(SEED) --program-dir $(OUT) --results results \
	  $(if $(FUZZ_REQUESTS),--fuzz-requests $(FUZZ_REQUESTS)) $(if $(FUZZ_SOURCES),--fuzz-sources $(FUZZ_SOURCES)) \
	  $(if $(FUZZ_JSONS),--fuzz-jsons $(FUZZ_JSONS))

# a scenario sweep (root: Mininet) -> results/<name>-<UTC time>/{runs.csv,summary.md,time.png,goodput.png}
# RESUME=results/<name>-<time>: continue that sweep (SCENARIO, if given on the command line, must be its scenario)
experiment: build
	$(RESUME_HINT) $(PY) -m experiments.sweep $(if $(and $(RESUME),$(filter file default,$(origin SCENARIO))),,$(SCENARIO)) \
	  --json $(OUT)/switchml.json --p4info $(OUT)/switchml.p4info.txt $(if $(RESUME),--resume $(RESUME))

# the simulator against the emulator: one scenario on both engines -> results/validate-<name>-<time>/validation.md
VALIDATE    ?= experiments/scenarios/validate-sim.toml
validate-sim: build
	$(PY) -m experiments.validate $(VALIDATE) $(if $(VALIDATE_MININET),--mininet $(VALIDATE_MININET)) \
		$(if $(VALIDATE_SIM),--sim $(VALIDATE_SIM))

# J jobs sharing one switch, SwitchML (static partition) vs ATP (shared pool + PS) at equal memory (root)
# -> results/multitenant-<UTC time>/{runs.csv,summary.md,multitenant.png}
JOBS        ?= 3
multitenant: build
	$(RESUME_HINT) $(PY) -m experiments.multitenant --jobs $(JOBS) --loss $(LOSS) --seed $(SEED) --reps $(REPS) \
	  $(if $(TARGET),--target $(TARGET)) $(if $(BW),--bw $(BW)) $(if $(POLICY),--policies $(POLICY)) --program-dir $(OUT) $(MULTITENANT_ARGS) \
	  $(if $(RESUME),--resume $(RESUME))

# ATP on RACKS rack switches under a PS rack switch: two-level vs one-level aggregation (root)
# -> results/twolevel-<UTC time>/{runs.csv,summary.md,twolevel.png}
twolevel: build
	$(PY) -m experiments.twolevel --racks $(RACKS) --workers $(WORKERS) --size $(SIZE) --loss $(LOSS) --seed $(SEED) --reps $(REPS) \
	  $(if $(BW),--bw $(BW)) $(if $(TARGET),--target $(TARGET)) --program-dir $(OUT)

# the docs' scenario figures regenerated, each stamped with its commit and command (root; ~10 min for all):
# results/readme/<name>-summary.md and plots; FIGURES_ONLY="workers-sweep size-sweep" for some of them; the sweeps'
# directories under results/figures-<UTC time>/ (RESUME=results/figures-<time>: continue an interrupted one)
FIGURES_ONLY ?=
figures: build
	$(RESUME_HINT) $(PY) -m experiments.figures $(if $(FIGURES_ONLY),--only $(FIGURES_ONLY)) $(if $(RESUME),--resume $(RESUME))

# data-parallel training on the Mininet hosts, once per algorithm (root) -> results/train-<UTC time>/
train: build
	$(RESUME_HINT) $(PY) -m experiments.train --json $(OUT)/switchml.json --p4info $(OUT)/switchml.p4info.txt $(TRAIN_ARGS) \
	  $(if $(RESUME),--resume $(RESUME))

# PyTorch (CPU build, large) is an optional extra, never part of `make test`'s setup; test-torch runs DDP through the
# embedded switch (tests marked `torch`)
torch: setup
	$(BIN)/pip install -q --disable-pip-version-check 'torch==2.13.0'

test-torch: torch
	$(PY) -m pytest -q -m torch tests

# p4src/*.p4, and the program of every plug-in protocol ($INA_PROTOCOLS, docs/adding-a-protocol.md) beside them
build: setup $(P4SRC:p4src/%.p4=$(OUT)/%.json)
	@$(PY) -m worker.protocols --plugin-sources | while read -r program source; do \
	  if [ ! $(OUT)/$$program.json -nt $$source ]; then \
	    echo "$(P4C) -I p4src -I $$(dirname $$source) -o $(OUT)/$$program.json --p4runtime-files $(OUT)/$$program.p4info.txt $$source"; \
	    $(P4C) -I p4src -I $$(dirname $$source) -o $(OUT)/$$program.json --p4runtime-files $(OUT)/$$program.p4info.txt $$source || exit 1; \
	  fi; done

$(OUT)/%.json: p4src/%.p4 $(wildcard p4src/include/*) $(if $(findstring compiler,$(P4C)),$(wildcard compiler/*.py compiler/include/*)) | setup
	@mkdir -p $(OUT)
	$(P4C) -I p4src $(P4FLAGS) -o $@ --p4runtime-files $(OUT)/$*.p4info.txt $<

$(OUT)/esa.json $(OUT)/release.json: p4src/atp.p4   # esa.p4 and release.p4 are atp.p4 with ATP_ESA (and ATP_RELEASE) defined
$(OUT)/omnireduce.json: p4src/switchml.p4   # omnireduce.p4 is switchml.p4 with INA_SPARSE defined

# TARGET=bmv2: only the tests marked bmv2 (against real simple_switch_grpc, which then must be on PATH)
test: setup shell-venv docs
	$(if $(filter bmv2,$(TARGET)),TARGET=bmv2 $(PY) -m pytest -q -m bmv2 $(PYTEST_ARGS),$(PY) -m pytest -q $(PYTEST_ARGS))

controller-shell: setup
	$(PY) -m controller --grpc-addr $(GRPC_ADDR) --device-id $(DEVICE_ID) \
	  $(if $(TLS_ON),--ssl-ca $(TLS_DIR)/ca.pem --ssl-cert $(TLS_DIR)/client.pem --ssl-key $(TLS_DIR)/client.key) shell

p4runtime-shell: shell-venv
	$(VENV_SHELL)/bin/python -m p4runtime_sh --grpc-addr $(GRPC_ADDR) --device-id $(DEVICE_ID) --election-id 0,1 \
	  $(if $(TLS_ON),--ssl --cacert $(TLS_DIR)/ca.pem --cert $(TLS_DIR)/client.pem --private-key $(TLS_DIR)/client.key)

# all-reduce goodput, WORKERS 2/4/8 x LOSS 0/1 % on the embedded switch (root: Mininet) -> results/bench/allreduce.{md,csv,png}
# then the scaling sweep (time, CPU per element, peak RSS vs size and vs workers) -> results/bench/scaling.{md,csv,png};
# BENCH_SCALING=full for the finer, repeated sweep, BENCH_SCALING=off to skip it
BENCH_SCALING ?= default
# the rate-limited points: every in-network protocol, 4 and 8 workers on 1 and 2 Mbit/s links, loss-free
# -> results/bench/slow-links-<protocol>-<rate>mbit.*; BENCH_SLOW=off to skip them
BENCH_SLOW    ?= on
BENCH_SLOW_RATES ?= 1 2
# BENCH_COMPARE=DIR|REV: another version of the project (a checkout directory or a git revision, e.g. 355f392, the
# start of the performance round), run alternately with this tree (experiments.bench.compare; bench-switch: its switch)
BENCH_COMPARE ?=
SCALING_POOL  := 8192
bench: build $(OUT)/switchml-pool$(SCALING_POOL).json
	$(PY) -m experiments.bench --json $(OUT)/switchml.json --p4info $(OUT)/switchml.p4info.txt --out results/bench/allreduce \
	  $(if $(BENCH_COMPARE),--compare $(BENCH_COMPARE))
	$(if $(filter off,$(BENCH_SLOW)),,for p in $$($(PY) -m worker.protocols --in-network); do for bw in $(BENCH_SLOW_RATES); do \
	  $(PY) -m experiments.bench --protocol $$p --out results/bench/slow-links-$$p-$${bw}mbit --workers 4 8 --loss 0 \
	  --bw $$bw --size 65536 --reps 3 || exit 1; done; done)
	$(if $(filter off,$(BENCH_SCALING)),,$(PY) -m experiments.bench.scaling --preset $(BENCH_SCALING) --out results/bench/scaling \
	  --json $(OUT)/switchml-pool$(SCALING_POOL).json --p4info $(OUT)/switchml-pool$(SCALING_POOL).p4info.txt)

# switchml.p4 with a full-size pool: the scaling sweep measures the switch's memory with it
$(OUT)/switchml-pool$(SCALING_POOL).json: p4src/switchml.p4 $(wildcard p4src/include/*) | setup
	@mkdir -p $(OUT)
	$(P4C) -I p4src -D INA_POOL_SIZE=$(SCALING_POOL) -o $@ --p4runtime-files $(OUT)/switchml-pool$(SCALING_POOL).p4info.txt $<

# switchml.p4 for jobs of more than 32 workers, not part of `make build`: make out/switchml-w512.json (W = 64, 128,
# 256 or 512: -D INA_MAX_WORKERS=W, the worker bitmap's width; the P4Info beside it)
$(OUT)/switchml-w%.json: p4src/switchml.p4 $(wildcard p4src/include/*) | setup
	@mkdir -p $(OUT)
	$(P4C) -I p4src -D INA_MAX_WORKERS=$* -o $@ --p4runtime-files $(OUT)/switchml-w$*.p4info.txt $<

# issue 11's loss goal (4 workers, 1 % loss >= 85 % of loss-free): loss-free and 1 % runs back to back, repeated
# until the interval of the median share is narrow enough to settle it on a noisy host -> results/bench/loss-share.*
BENCH_LOSS_REPS ?= 80
bench-loss: build
	$(PY) -m experiments.bench --json $(OUT)/switchml.json --p4info $(OUT)/switchml.p4info.txt --out results/bench/loss-share \
	  --workers 4 --loss 0 0.01 --reps $(BENCH_LOSS_REPS)

# the same program, entries and frames on two switches, every output compared (root for bmv2): real simple_switch_grpc
# when on PATH, else p4c's JSON against ours; DIFFTEST_PROGRAMS (default: the test programs), TUTORIALS=<a
# p4lang/tutorials checkout> adds its solutions with their s1-runtime.json, P4C_SAMPLES=<a p4lang/p4c checkout> its
# v1model samples that have an STF test (their STF frames first); DIFFTEST_ARGS="--against p4c --packets 500"
DIFFTEST_PROGRAMS ?= $(wildcard tests/p4/*.p4) $(wildcard tests/compiler/p4/*.p4)
difftest: setup
	$(PY) -m perf.difftest $(DIFFTEST_PROGRAMS) $(if $(TUTORIALS),--tutorials $(TUTORIALS)) \
	  $(if $(P4C_SAMPLES),--p4c-samples $(P4C_SAMPLES)) $(DIFFTEST_ARGS)

# the packet simulator at scale: one verified all-reduce of 4 MiB per worker at 100 Gbit/s, per worker count
# -> results/bench/sim.md (wall time, events/s, peak RSS) and sim-history.csv
BENCH_SIM_WORKERS ?= 64 256
BENCH_SIM_TWOTIER_WORKERS ?= 1024
BENCH_SIM_TWOTIER_MIB ?= 0.25
bench-sim: build
	$(PY) -m experiments.bench.sim --workers $(BENCH_SIM_WORKERS) --out results/bench/sim
	$(PY) -m experiments.bench.sim --protocol atp --racks 32 --workers $(BENCH_SIM_TWOTIER_WORKERS) \
	  --size-mib $(BENCH_SIM_TWOTIER_MIB) --out results/bench/sim-twotier

bench-switch: setup
	$(PY) -m perf.switchbench --out results/bench/switch.md $(if $(BENCH_COMPARE),--compare-version $(BENCH_COMPARE)) \
	  $(BENCH_SWITCH_ARGS)

clean:
	rm -rf $(OUT) .pytest_cache /tmp/ina-testbed
	-command -v mn >/dev/null 2>&1 && mn -c >/dev/null 2>&1 || true

# --- docs --------------------------------------------------------------------------------------------------
# The documentation site: docs/*.md + mkdocs.yml -> site/ (mkdocs-material, pinned in docs/requirements.txt, in a
# venv of its own). --strict: a broken link or a page missing from the nav fails the build.
DOCS_VENV   ?= .venv-docs

.PHONY: docs
docs: $(DOCS_VENV)/.setup-done
	NO_MKDOCS_2_WARNING=1 $(DOCS_VENV)/bin/mkdocs build --strict

$(DOCS_VENV)/.setup-done: docs/requirements.txt
	$(PYTHON) -m venv $(DOCS_VENV)
	$(DOCS_VENV)/bin/pip install -q -r docs/requirements.txt
	touch $@
