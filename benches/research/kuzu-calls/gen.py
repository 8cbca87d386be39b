"""Synthetic call graph close to a big real repo, written as headerless CSVs.

600,000 Symbol, 9,000 File, ~1.5M CALLS (Symbol->Symbol and File->Symbol) with a
skewed in-degree (a dozen hubs called 10k-40k times, a Pareto tail, most 0-5),
parallel edges (same pair, other line), self-recursion, mutual recursion and
cycles of length 3..8; plus CONTAINS (File->Symbol, Symbol->Symbol) for realism.
Ids follow the project: Symbol 's_' + 24 hex, File 'repo@ref:path'.
"""
import bisect, csv, hashlib, itertools, json, os, random, sys
from collections import Counter

random.seed(42)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
os.makedirs(OUT, exist_ok=True)
N_SYM, N_FILE, N_CALLS = 600_000, 9_000, 1_500_000
REPO, REF = "bigrepo", "main"

def sid(i):
    return "s_" + hashlib.blake2b(str(i).encode(), digest_size=12).hexdigest()

# files
files = []
for f in range(N_FILE):
    d, e = f % 120, f % 17
    files.append((f"{REPO}@{REF}:src/mod{d}/sub{e}/file{f}.rs", f"src/mod{d}/sub{e}/file{f}.rs", d))
# symbols per file: exponential, fixed to the total
counts = [max(1, int(random.expovariate(1 / (N_SYM / N_FILE)))) for _ in range(N_FILE)]
scale = N_SYM / sum(counts)
counts = [max(1, int(c * scale)) for c in counts]
counts[-1] += N_SYM - sum(counts)
assert counts[-1] > 0 and sum(counts) == N_SYM

KINDS = ["fn"] * 45 + ["method"] * 25 + ["struct"] * 8 + ["class"] * 4 + ["const"] * 8 + ["field"] * 6 + ["trait"] * 2 + ["mod"] * 2
VOCAB = [w + suf for w in ("new", "get", "set", "parse", "read", "write", "run", "build", "init", "handle", "process",
                          "load", "save", "check", "validate", "emit", "visit", "walk", "resolve", "render", "encode", "decode")
         for suf in ("", "_all", "_one", "_inner", "_impl", "_with", "_from", "_into", "_raw", "_ex")] + [f"helper{i}" for i in range(3000)]

sym_kind, sym_file, sym_line, sym_name = [], [], [], []
callables, file_callables = [], [[] for _ in range(N_FILE)]
contains_fs, contains_ss = [], []
with open(f"{OUT}/symbols.csv", "w", newline="") as fh:
    w = csv.writer(fh)
    i = 0
    for f, c in enumerate(counts):
        fid, path, d = files[f]
        line = 1
        parent = None
        for _ in range(c):
            k = random.choice(KINDS)
            name = random.choice(VOCAB)
            ls = line + random.randint(1, 6)
            le = ls + random.randint(1, 60)
            line = le
            if k in ("struct", "class", "trait", "mod"):
                parent = i; qn = f"mod{d}::{name.title()}{i}"; contains_fs.append((fid, sid(i)))
            elif k in ("method", "field") and parent is not None:
                qn = f"mod{d}::T{parent}::{name}"; contains_ss.append((sid(parent), sid(i)))
            else:
                qn = f"mod{d}::{name}"; contains_fs.append((fid, sid(i)))
            doc = "\\N" if random.random() < 0.6 else f"Does {name} for {qn}."
            w.writerow([sid(i), f"st{i}", REPO, REF, path, name, k, qn, "rust", ls, le, ls * 40, le * 40,
                        f"fn {name}(x: u32) -> u32", "pub" if random.random() < .4 else "private", doc])
            sym_kind.append(k); sym_file.append(f); sym_line.append(ls); sym_name.append(name)
            if k in ("fn", "method"):
                callables.append(i); file_callables[f].append(i)
            i += 1
with open(f"{OUT}/files.csv", "w", newline="") as fh:
    w = csv.writer(fh)
    for f, (fid, path, d) in enumerate(files):
        w.writerow([fid, REPO, REF, path, "rust", f"mod{d}", f"mod{d}", f * 7919, 500, 20000, "[]"])
for name, rows in (("contains_fs", contains_fs), ("contains_ss", contains_ss)):
    with open(f"{OUT}/{name}.csv", "w", newline="") as fh:
        csv.writer(fh).writerows(rows)

dir_files = {}
for f, (_, _, d) in enumerate(files):
    dir_files.setdefault(d, []).append(f)

# caller weights (lognormal out-degree), global target weights (Pareto in-degree)
cw = list(itertools.accumulate(random.lognormvariate(0, 1.0) for _ in callables))
tw = list(itertools.accumulate(random.paretovariate(1.3) if random.random() < 0.5 else 0.02 for _ in callables))
def pick(cum):
    return callables[bisect.bisect(cum, random.random() * cum[-1])]

edges = []  # (caller_kind, caller, callee)
def add(a, b, kind="S"):
    edges.append((kind, a, b))

hubs = random.sample(callables, 12)
hub_deg = [40000, 30000, 25000, 20000, 15000, 12000, 10000, 10000, 10000, 10000, 10000, 10000]
for h, n in zip(hubs, hub_deg):
    for _ in range(n):
        add(pick(cw), h)
# cycles
for _ in range(4000):
    a = random.choice(callables); add(a, a)
def local_cycle(n):
    f = random.randrange(N_FILE)
    pool = file_callables[f] if len(file_callables[f]) >= n else callables
    nodes = random.sample(pool, n)
    for x, y in zip(nodes, nodes[1:] + nodes[:1]):
        add(x, y)
for _ in range(2000): local_cycle(2)
for _ in range(1000): local_cycle(3)
for _ in range(500): local_cycle(random.randint(4, 8))
# the rest: local file 45%, same dir 15%, global 40%; 3% from a File node
base = len(edges)
while len(edges) < N_CALLS * 0.91:
    r = random.random()
    if r < 0.03:
        f = random.randrange(N_FILE)
        tgt = random.choice(file_callables[f]) if file_callables[f] and random.random() < .5 else pick(tw)
        add(f, tgt, "F"); continue
    a = pick(cw)
    if r < 0.48 and len(file_callables[sym_file[a]]) > 1:
        b = random.choice(file_callables[sym_file[a]])
    elif r < 0.63:
        f2 = random.choice(dir_files[files[sym_file[a]][2]])
        b = random.choice(file_callables[f2]) if file_callables[f2] else pick(tw)
    else:
        b = pick(tw)
    add(a, b)
# parallel edges: same pair at another line
for e in random.sample(edges, N_CALLS - len(edges)):
    edges.append(e)
random.shuffle(edges)

CONF = ["static"] * 7 + ["heuristic"] * 2 + ["name"]
indeg = Counter()
with open(f"{OUT}/calls_ss.csv", "w", newline="") as ss, open(f"{OUT}/calls_fs.csv", "w", newline="") as fs:
    wss, wfs = csv.writer(ss), csv.writer(fs)
    for kind, a, b in edges:
        col = random.randint(1, 100)
        conf = random.choice(CONF)
        indeg[b] += 1
        if kind == "S":
            wss.writerow([sid(a), sid(b), sym_line[a] + random.randint(1, 50), col, conf, sym_name[b]])
        else:
            wfs.writerow([files[a][0], sid(b), random.randint(1, 500), col, conf, sym_name[b]])

hist = Counter()
for c in callables:
    d = indeg.get(c, 0)
    hist["0" if d == 0 else "1-5" if d <= 5 else "6-20" if d <= 20 else "21-100" if d <= 100 else "101-1000" if d <= 1000 else "1001-9999" if d < 10000 else "10k+"] += 1
stats = {
    "symbols": N_SYM, "files": N_FILE, "callables": len(callables), "calls": len(edges),
    "calls_from_file": sum(1 for e in edges if e[0] == "F"),
    "contains_fs": len(contains_fs), "contains_ss": len(contains_ss),
    "callable_in_degree_hist": dict(hist),
    "top_in_degree": [(sid(k), v) for k, v in indeg.most_common(20)],
    "hubs": [sid(h) for h in hubs],
}
json.dump(stats, open(f"{OUT}/stats.json", "w"), indent=1)
# sample targets for benchmarks: 200 random callables, plus mid-degree ones
rnd = random.Random(7)
json.dump({
    "random": [sid(x) for x in rnd.sample(callables, 200)],
    "called": [sid(x) for x in rnd.sample([c for c in callables if 1 <= indeg.get(c, 0) <= 100], 200)],
    "mid": [sid(x) for x in rnd.sample([c for c in callables if 100 < indeg.get(c, 0) < 10000], 50)],
    "hubs": [sid(h) for h in hubs],
    "callers_random": [sid(x) for x in rnd.sample(callables, 200)],
}, open(f"{OUT}/targets.json", "w"))
print(json.dumps({k: v for k, v in stats.items() if k not in ("top_in_degree", "hubs")}, indent=1))
print(stats["top_in_degree"][:20])
