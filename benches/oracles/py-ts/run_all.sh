#!/bin/bash
# Re-run every experiment; writes out/*.jsonl, out/*.stats.json, out/*.xcheck.json
set -u
cd "$(dirname "$0")"
export PATH=$PWD/venv/bin:$PATH
for p in dateutil attr click email; do
  /usr/bin/time -f "$p jedi wall %e s maxrss %M KB" python py_oracle.py corpus/py/$p --out out/$p.jsonl --stats out/$p.stats.json 2>&1 | tail -1
  python pyright_xcheck.py corpus/py/$p out/$p.jsonl --out out/$p.xcheck.jsonl > out/$p.xcheck.json
  echo "$p jedi: $(tr -d ' \n' < out/$p.stats.json)"
  echo "$p pyright-xcheck: $(tr -d ' \n' < out/$p.xcheck.json)"
done
/usr/bin/time -f "rxjs wall %e s maxrss %M KB" node ts/ts_oracle.js --project corpus/ts/rxjs-7.8.2/src/tsconfig.cjs.json --root corpus/ts/rxjs-7.8.2 --out out/rxjs.jsonl --diagnostics 2> >(tr -d ' \n' > out/rxjs.stats.json; echo >> out/rxjs.stats.json)
sleep 1; echo "rxjs: $(cat out/rxjs.stats.json)"
/usr/bin/time -f "zod wall %e s maxrss %M KB" node ts/ts_oracle.js --project corpus/ts/zod-4.6.7/tsconfig.oracle.json --out out/zod.jsonl --diagnostics 2> >(tr -d ' \n' > out/zod.stats.json; echo >> out/zod.stats.json)
sleep 1; echo "zod: $(cat out/zod.stats.json)"
