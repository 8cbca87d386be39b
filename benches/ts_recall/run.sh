#!/usr/bin/env bash
# Declaration recall of cruxe on a TypeScript repository, against the TypeScript
# compiler API: every exported declaration tsc sees, joined with cruxe's top-level
# symbols by (file, name). docs/BENCHMARKS.md ("TypeScript declaration recall").
#   benches/ts_recall/run.sh REPO [CRUXE_BIN]
# Needs Node and the npm registry (installs typescript 5.9.3 into $WORK).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$1" && pwd)"
CRUXE="${2:-${CARGO_TARGET_DIR:-$HOME/.cache/cruxe-target}/debug/cruxe}"
WORK="${WORK:-/tmp/cruxe-ts-recall}"
mkdir -p "$WORK" && cp "$HERE/package.json" "$HERE/ts_decls.js" "$WORK/"
[ -d "$WORK/node_modules/typescript" ] || (cd "$WORK" && npm install --no-audit --no-fund >/dev/null)
rm -rf "$WORK/data"
"$CRUXE" index "$REPO" --data "$WORK/data" -v | tee "$WORK/index.log" | head -1
node "$WORK/ts_decls.js" "$REPO" > "$WORK/ts_decls.jsonl"
"$CRUXE" cypher --data "$WORK/data" --json "MATCH (f:File)-[:CONTAINS]->(s:Symbol) RETURN f.path AS path, s.name AS name, s.kind AS kind, s.line_start AS line, s.visibility AS vis" > "$WORK/top.json"
"$CRUXE" cypher --data "$WORK/data" --json "MATCH (s:Symbol) RETURN s.path AS path, s.name AS name, s.kind AS kind, s.line_start AS line, s.visibility AS vis" > "$WORK/all.json"
python3 "$HERE/recall.py" "$WORK/ts_decls.jsonl" "$WORK/top.json" "$WORK/all.json"
