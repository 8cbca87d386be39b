"""Callers / callees of X at depth 1..k: Cypher recursive patterns vs a client-side
per-depth frontier.
Usage: bench_traverse.py DIRECTION VARIANT [KS] [TARGET_SET] [N]
  DIRECTION: in (callers) | out (callees)
  VARIANT: see CYPHER keys and frontier_* below
Prints one JSON line per k: p50/p95/max ms over the targets, result sizes, timeouts."""
import json, sys, time
from kz import *

LIMIT = 500
TIMEOUT_MS = 10_000


def pat(dirn, k, sem=""):
    # (c) unlabeled for callers: a caller may be a File (module-level call).
    if dirn == "in":
        return f"MATCH (c)-[p:CALLS* {sem} 1..{k}]->(x:Symbol {{id: $id}})"
    return f"MATCH (x:Symbol {{id: $id}})-[p:CALLS* {sem} 1..{k}]->(c:Symbol)"


def cypher(var, dirn, k):
    P = lambda sem="": pat(dirn, k, sem)
    if var in ("walk", "trail", "acyclic", "all_shortest"):
        sem = {"walk": "", "trail": "TRAIL", "acyclic": "ACYCLIC", "all_shortest": "ALL SHORTEST"}[var]
        return P(sem) + f"\nRETURN c.id, label(c), min(length(p)) AS depth\nORDER BY depth LIMIT {LIMIT}"
    if var == "shortest":           # ids + min depth
        return P("SHORTEST") + f"\nRETURN c.id, label(c), length(p) AS depth\nORDER BY depth LIMIT {LIMIT}"
    if var == "shortest_props":     # + the row a UI shows
        return P("SHORTEST") + ("\nRETURN c.id, label(c), length(p) AS depth, c.name, c.kind, c.path, c.line_start"
                                f"\nORDER BY depth LIMIT {LIMIT}")
    if var == "shortest_edges":     # + each node's out-edges (targets as internal ids; the client keeps those inside the set)
        return P("SHORTEST") + f"""
WITH x, c, length(p) AS depth ORDER BY depth LIMIT {LIMIT}
OPTIONAL MATCH (c)-[r:CALLS]->(b)
RETURN c.id, label(c), id(c), depth, id(x),
       collect({{to: id(b), line: r.line, col: r.col, confidence: r.confidence}}) AS out"""
    if var == "subgraph":           # nodes + out-edges of each node and of X (depth 0); the client keeps edges inside the set
        return P("SHORTEST") + f"""
WITH c, length(p) AS depth ORDER BY depth LIMIT {LIMIT}
OPTIONAL MATCH (c)-[r:CALLS]->(b)
RETURN c.id AS id, label(c) AS label, id(c) AS iid, depth,
       collect({{to: id(b), line: r.line, col: r.col, confidence: r.confidence}}) AS out
UNION ALL
MATCH (c:Symbol {{id: $id}})
OPTIONAL MATCH (c)-[r:CALLS]->(b)
RETURN c.id AS id, label(c) AS label, id(c) AS iid, 0 AS depth,
       collect({{to: id(b), line: r.line, col: r.col, confidence: r.confidence}}) AS out"""
    if var == "both_union":         # callers and callees in one statement
        return (f"MATCH (c)-[p:CALLS* SHORTEST 1..{k}]->(x:Symbol {{id: $id}})\n"
                f"RETURN c.id AS id, label(c) AS label, length(p) AS depth, 'caller' AS side\n"
                f"UNION ALL\n"
                f"MATCH (x:Symbol {{id: $id}})-[p:CALLS* SHORTEST 1..{k}]->(c:Symbol)\n"
                f"RETURN c.id AS id, label(c) AS label, length(p) AS depth, 'callee' AS side")
    if var == "both_undirected":    # NOT callers+callees: any mix of directions (siblings, via hubs)
        return (f"MATCH (c)-[p:CALLS* SHORTEST 1..{k}]-(x:Symbol {{id: $id}})\n"
                f"RETURN c.id, label(c), length(p) AS depth ORDER BY depth LIMIT {LIMIT}")
    if var == "depth_counts":       # exact totals per depth, no property read
        return P("SHORTEST") + "\nRETURN length(p) AS depth, count(*) AS n ORDER BY depth"
    if var == "path_tree":          # BFS-tree edge of each node via rels(p) (path tracking: slower)
        return P("SHORTEST") + f"\nWITH c, p, length(p) AS depth ORDER BY depth LIMIT {LIMIT}\nRETURN c.id, id(c), depth, rels(p)[{'1' if dirn == 'in' else 'depth'}]"
    raise KeyError(var)


def frontier_queries(dirn):
    if dirn == "in":
        RET = "RETURN c.id, label(c), x.id, e.line, e.col, e.confidence"
        return {
            "in_list": "MATCH (c)-[e:CALLS]->(x:Symbol) WHERE x.id IN $f " + RET,
            "unwind": "UNWIND $f AS fid MATCH (c)-[e:CALLS]->(x:Symbol {id: fid}) " + RET,
            "offset_in": "MATCH (c)-[e:CALLS]->(x:Symbol) WHERE offset(id(x)) IN $f "
                         "RETURN c.id, label(c), offset(id(c)), offset(id(x)), e.line, e.col, e.confidence",
            "per_node": "MATCH (c)-[e:CALLS]->(x:Symbol {id: $f}) " + RET,
        }
    RET = "RETURN c.id, label(c), x.id, e.line, e.col, e.confidence"
    return {
        "in_list": "MATCH (x:Symbol)-[e:CALLS]->(c:Symbol) WHERE x.id IN $f " + RET,
        "unwind": "UNWIND $f AS fid MATCH (x:Symbol {id: fid})-[e:CALLS]->(c:Symbol) " + RET,
        "offset_in": "MATCH (x:Symbol)-[e:CALLS]->(c:Symbol) WHERE offset(id(x)) IN $f "
                     "RETURN c.id, label(c), offset(id(c)), offset(id(x)), e.line, e.col, e.confidence",
        "per_node": "MATCH (x:Symbol {id: $f})-[e:CALLS]->(c:Symbol) " + RET,
    }


def frontier_bfs(conn, dirn, mode, xid, k, limit=LIMIT):
    """Client BFS; visited set here; stops expanding once `limit` nodes are found.
    A File caller is a leaf (nothing calls a File). Returns (depth by key, edges)."""
    q = frontier_queries(dirn)[mode]
    if mode == "offset_in":
        key0 = rows(conn, "MATCH (x:Symbol {id: $id}) RETURN offset(id(x))", {"id": xid})[0][0]
    else:
        key0 = xid
    depth, edges, frontier = {key0: 0}, [], [key0]
    for d in range(1, k + 1):
        if not frontier or len(depth) - 1 >= limit:
            break
        if mode == "per_node":
            res = [r for f in frontier for r in rows(conn, q, {"f": f})]
        else:
            res = rows(conn, q, {"f": frontier})
        nxt = []
        for r in res:
            if mode == "offset_in":
                cid, lab, coff, xk, line, col, conf = r
                key = coff if lab == "Symbol" else cid
            else:
                cid, lab, xk, line, col, conf = r
                key = cid
            edges.append((key, xk, line, col, conf))
            if key not in depth:
                depth[key] = d
                if lab == "Symbol":
                    nxt.append(key)
        frontier = nxt
    return depth, edges


def run_one(conn, var, dirn, k, xid):
    t = time.perf_counter()
    if var == "both_two":
        a = rows(conn, cypher("shortest", "in", k), {"id": xid})
        b = rows(conn, cypher("shortest", "out", k), {"id": xid})
        return (time.perf_counter() - t) * 1000, (len(a) + len(b), 0)
    if var.startswith("frontier_"):
        n, e = frontier_bfs(conn, dirn, var[len("frontier_"):], xid, k)
        size = (len(n) - 1, len(e))
    else:
        out = rows(conn, cypher(var, dirn, k), {"id": xid})
        if var == "depth_counts":
            size = (sum(o[1] for o in out), len(out))
        elif var == "subgraph":
            ids = {o[2]["offset"] for o in out if o[1] == "Symbol"}
            size = (len(out) - 1, sum(1 for o in out for e in o[4] if e["to"] and e["to"]["offset"] in ids))
        elif var == "shortest_edges":
            ids = {o[2]["offset"] for o in out} | ({out[0][4]["offset"]} if out else set())
            size = (len(out), sum(1 for o in out for e in o[5] if e["to"] and e["to"]["offset"] in ids))
        else:
            size = (len(out), 0)
    return (time.perf_counter() - t) * 1000, size


WARM = [
    "MATCH (s:Symbol) RETURN count(s.id), count(s.name), count(s.kind), count(s.path), count(s.line_start), count(s.qualified_name)",
    "MATCH (f:File) RETURN count(f.id), count(f.path)",
    "MATCH (a)-[e:CALLS]->(b) RETURN count(e.line), count(e.col), count(e.confidence), count(e.to_name)",
    "MATCH (b:Symbol)<-[e:CALLS]-(a) WHERE b.line_start > 0 RETURN count(a)",
]


def warm(conn, var, dirn, ks, targets):
    """Whole DB into the buffer pool, then one untimed pass of the variant at max k."""
    for q in WARM:
        rows(conn, q)
    t = time.time()
    for xid in targets:
        try:
            run_one(conn, var, dirn, max(ks), xid)
        except Exception:
            pass
        if time.time() - t > 60:
            break


def bench(conn, var, dirn, ks, targets, budget_s=240):
    warm(conn, var, dirn, ks, targets)
    for k in ks:
        ts, sizes, tmo, errs = [], [], 0, []
        t_start = time.time()
        for xid in targets:
            try:
                ms, size = run_one(conn, var, dirn, k, xid)
                ts.append(ms); sizes.append(size)
            except Exception as e:
                if "nterrupt" in str(e) or "imeout" in str(e):
                    tmo += 1; ts.append(TIMEOUT_MS)
                else:
                    errs.append(str(e)[:150])
            if time.time() - t_start > budget_s:
                break
        s0 = sorted(s[0] for s in sizes) or [0]
        s1 = sorted(s[1] for s in sizes) or [0]
        yield {"dir": dirn, "var": var, "k": k, **pct(ts), "timeouts": tmo,
               "nodes_p50": s0[len(s0) // 2], "nodes_max": s0[-1],
               "aux_p50": s1[len(s1) // 2], "aux_max": s1[-1],
               "errors": errs[:2], "rss_mb": rss_mb(), "hwm_mb": hwm_mb()}


if __name__ == "__main__":
    DIRN, VAR = sys.argv[1], sys.argv[2]
    KS = [int(k) for k in (sys.argv[3] if len(sys.argv) > 3 else "1,2,3,4,5").split(",")]
    TSET = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else ("random" if DIRN == "in" else "callers_random")
    N = int(sys.argv[5]) if len(sys.argv) > 5 else 200
    db, conn = open_ro()
    conn.set_query_timeout(TIMEOUT_MS)
    for r in bench(conn, VAR, DIRN, KS, T[TSET][:N]):
        r["set"] = TSET
        print(json.dumps(r), flush=True)
