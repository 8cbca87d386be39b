"""Hub nodes (in-degree 10k-44k): what each query shape costs at depth 1..5.
Each query runs in its own process (one.py) so peak memory is per query."""
import json, subprocess, sys
from kz import T, HERE

PY = sys.executable
stats = json.load(open(f"{HERE}/data/stats.json"))
top = [t for t, _ in stats["top_in_degree"]]
HUBS = {"hub44k": top[0], "hub22k": top[3], "hub11k": top[8], "mid": T["mid"][0]}
which = sys.argv[1].split(",") if len(sys.argv) > 1 else list(HUBS)
only = sys.argv[2].split(",") if len(sys.argv) > 2 else None


def pat(k, sem=""):
    return f"MATCH (c)-[p:CALLS* {sem} 1..{k}]->(x:Symbol {{id: $id}})"


Q = {
    "depth1_exact": lambda k: "MATCH (c)-[e:CALLS]->(x:Symbol {id: $id}) RETURN count(*) AS edges, count(DISTINCT c) AS callers",
    "depth_counts": lambda k: pat(k, "SHORTEST") + " RETURN length(p) AS depth, count(*) ORDER BY depth",
    "shortest_limit": lambda k: pat(k, "SHORTEST") + " RETURN c.id, label(c), length(p) AS depth ORDER BY depth LIMIT 500",
    "shortest_edges": lambda k: pat(k, "SHORTEST") + """
WITH x, c, length(p) AS depth ORDER BY depth LIMIT 500
OPTIONAL MATCH (c)-[r:CALLS]->(b)
RETURN c.id, label(c), id(c), depth, id(x), collect({to: id(b), line: r.line, col: r.col, confidence: r.confidence})""",
    "walk_count": lambda k: pat(k) + " RETURN count(*) AS paths, count(DISTINCT c) AS nodes",
    "walk_limit_nosort": lambda k: pat(k) + " RETURN c.id, length(p) LIMIT 500",
    "walk_min_depth": lambda k: pat(k) + " RETURN c.id, min(length(p)) AS depth ORDER BY depth LIMIT 500",
    "trail_count": lambda k: pat(k, "TRAIL") + " RETURN count(*) AS paths, count(DISTINCT c) AS nodes",
    "acyclic_count": lambda k: pat(k, "ACYCLIC") + " RETURN count(*) AS paths, count(DISTINCT c) AS nodes",
    "all_shortest_count": lambda k: pat(k, "ALL SHORTEST") + " RETURN count(*) AS paths, count(DISTINCT c) AS nodes",
    "shortest_count": lambda k: pat(k, "SHORTEST") + " RETURN count(*) AS paths",
}
KS = {
    "depth1_exact": [1], "depth_counts": [1, 2, 3, 4, 5, 10, 30], "shortest_limit": [1, 2, 3, 5],
    "shortest_edges": [1, 2, 3, 5], "walk_count": [1, 2, 3, 4], "walk_limit_nosort": [2, 3, 4],
    "walk_min_depth": [2, 3], "trail_count": [2, 3, 4], "acyclic_count": [2, 3, 4],
    "all_shortest_count": [3, 5], "shortest_count": [3, 5],
}
for h in which:
    for name, f in Q.items():
        if only and name not in only:
            continue
        for k in KS[name]:
            arg = {"q": f(k), "params": {"id": HUBS[h]}, "timeout_ms": 30_000, "reps": 3}
            out = subprocess.run([PY, f"{HERE}/one.py", json.dumps(arg)], capture_output=True, text=True, timeout=600)
            try:
                r = json.loads(out.stdout.strip().splitlines()[-1])
            except Exception:
                r = {"error": (out.stderr or out.stdout)[-300:], "rc": out.returncode}
            r.update({"hub": h, "query": name, "k": k})
            print(json.dumps(r), flush=True)
