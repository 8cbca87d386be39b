# cruxe — `make run` indexes this checkout and shows what is in the graph;
# `make test` runs everything CI runs. Both install what is missing (cmake).
#
# One cargo profile (dev, with optimised dependencies: see Cargo.toml) serves the
# binary, the tests, clippy and the benchmarks, so the Kuzu C++ library is built
# once. The build cache lives outside the checkout unless CARGO_TARGET_DIR is set.

SHELL := /bin/bash
export CARGO_TARGET_DIR ?= $(HOME)/.cache/cruxe-target
CRUXE := $(CARGO_TARGET_DIR)/debug/cruxe

.PHONY: run test deps build lint bench index status

deps:
	@command -v cmake >/dev/null 2>&1 || { \
	  echo "cruxe: installing cmake (needed to build the Kuzu C++ library)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq cmake >/dev/null; }
	@command -v cc >/dev/null 2>&1 && command -v c++ >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq build-essential >/dev/null; }

build: deps
	@echo "cruxe: building (the first build compiles Kuzu's C++ sources: 15-30 min on 2 cores)"
	cargo build --bin cruxe

run: build
	$(CRUXE) index .
	$(CRUXE) status
	$(CRUXE) hierarchy index_repo --path src/index.rs
	$(CRUXE) hierarchy GraphStore --direction descendants
	$(CRUXE) cypher "MATCH (s:Symbol) RETURN s.kind AS kind, count(*) AS symbols ORDER BY symbols DESC"

lint: deps
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings

test: lint
	cargo test

bench: deps
	cargo bench --profile dev --bench index
