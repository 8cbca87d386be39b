#!/usr/bin/env bash
# Rust oracle pipeline for one registry crate.
#   run_rust_oracle.sh CRATE_NAME-VERSION [default|all]
# Needs: setup_rust_oracle.sh run once (rust-analyzer component, rust-src, cargo-home with
# the sysroot's locked deps), ../venv with tomli_w, tree-sitter, tree-sitter-rust.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CRATE=$1
FEATURES=${2:-all}
PY=$HERE/../venv/bin/python
SRC=${CORPUS:-/work/corpora/rustcopy}/$CRATE
DST=$HERE/crates/$CRATE
OUT=$HERE/out
mkdir -p "$OUT" "$HERE/crates"
# Private CARGO_HOME: copy of ~/.cargo/registry + the sysroot's locked deps (see setup).
export CARGO_HOME=$HERE/cargo-home
export CARGO_NET_OFFLINE=true
"$PY" "$HERE/prepare_crate.py" "$SRC" "$DST" --force
CFG=()
if [ "$FEATURES" = all ]; then CFG=(--config-path "$HERE/ra-allfeatures.json"); fi
start=$(date +%s.%N)
/usr/bin/time -f 'rust-analyzer scip: %e s wall, %M KB max RSS' \
  rust-analyzer scip "$DST" --output "$OUT/$CRATE.scip" "${CFG[@]}" \
  >"$OUT/$CRATE.ra.log" 2>&1 || { tail -20 "$OUT/$CRATE.ra.log"; exit 1; }
grep -E 'rust-analyzer scip:|Generating SCIP finished' "$OUT/$CRATE.ra.log"
grep -c 'WARN\|ERROR' "$OUT/$CRATE.ra.log" | sed 's/^/warn+error log lines: /'
"$PY" "$HERE/extract_rust_calls.py" "$OUT/$CRATE.scip" -o "$OUT/$CRATE.edges.raw.jsonl" \
  --stats "$OUT/$CRATE.stats.json" 2>/dev/null
"$PY" "$HERE/rust_coverage.py" "$DST" "$OUT/$CRATE.scip" "$OUT/$CRATE.edges.raw.jsonl" \
  --annotate "$OUT/$CRATE.edges.jsonl" > "$OUT/$CRATE.coverage.json"
rm -f "$OUT/$CRATE.edges.raw.jsonl"
echo "edges: $(wc -l < "$OUT/$CRATE.edges.jsonl")  ->  $OUT/$CRATE.edges.jsonl"
cat "$OUT/$CRATE.stats.json"
"$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps({k:d[k] for k in ('counts','unmatched_ts_call_sites_by_reason','frac_ts_named_call_sites_resolved') if k in d}, indent=1))" "$OUT/$CRATE.coverage.json"
