"""Whole-graph questions: never-called functions, most-called, call cycles, transitive
callers count. Each query in its own process (one.py): warm DB, peak memory."""
import json, subprocess, sys
from kz import T, HERE

PY = sys.executable
stats = json.load(open(f"{HERE}/data/stats.json"))
HUB = stats["top_in_degree"][0][0]
PROJ = "CALL project_graph('cg', ['Symbol'], ['CALLS'])"
Q = {
  # never called
  "never_called_fn_exists": ("MATCH (s:Symbol) WHERE s.kind = 'fn' AND NOT EXISTS { MATCH ()-[:CALLS]->(s) } RETURN count(*)", {}),
  "never_called_fn_method_exists": ("MATCH (s:Symbol) WHERE s.kind IN ['fn', 'method'] AND NOT EXISTS { MATCH ()-[:CALLS]->(s) } RETURN count(*)", {}),
  "never_called_fn_optional_count": ("MATCH (s:Symbol) WHERE s.kind = 'fn' OPTIONAL MATCH ()-[e:CALLS]->(s) WITH s, count(e) AS n WHERE n = 0 RETURN count(*)", {}),
  "never_called_fn_ignoring_self": ("MATCH (s:Symbol) WHERE s.kind = 'fn' AND NOT EXISTS { MATCH (c)-[:CALLS]->(s) WHERE id(c) <> id(s) } RETURN count(*)", {}),
  "never_called_fn_list100": ("MATCH (s:Symbol) WHERE s.kind = 'fn' AND NOT EXISTS { MATCH ()-[:CALLS]->(s) } RETURN s.id, s.path, s.name ORDER BY s.path, s.name LIMIT 100", {}),
  "never_called_fn_in_path": ("MATCH (s:Symbol) WHERE s.kind = 'fn' AND s.path STARTS WITH 'src/mod7/' AND NOT EXISTS { MATCH ()-[:CALLS]->(s) } RETURN s.id, s.path, s.name LIMIT 100", {}),
  # most called
  "top20_in_degree": ("MATCH ()-[e:CALLS]->(s:Symbol) RETURN s.id, count(*) AS n ORDER BY n DESC LIMIT 20", {}),
  "top20_in_degree_distinct_callers": ("MATCH (c)-[e:CALLS]->(s:Symbol) RETURN s.id, count(DISTINCT c) AS n ORDER BY n DESC LIMIT 20", {}),
  # cycles
  "self_recursive_count": ("MATCH (a:Symbol)-[:CALLS]->(a) RETURN count(DISTINCT a)", {}),
  "cycle2_pairs": ("MATCH (a:Symbol)-[:CALLS]->(b:Symbol)-[:CALLS]->(a) WHERE offset(id(a)) < offset(id(b)) WITH DISTINCT a, b RETURN count(*)", {}),
  "cycle3_triples": ("MATCH (a:Symbol)-[:CALLS]->(b:Symbol)-[:CALLS]->(c:Symbol)-[:CALLS]->(a) WHERE offset(id(a)) < offset(id(b)) AND offset(id(a)) < offset(id(c)) AND b <> c WITH DISTINCT a, b, c RETURN count(*)", {}),
  "cycle3_list100": ("MATCH (a:Symbol)-[:CALLS]->(b:Symbol)-[:CALLS]->(c:Symbol)-[:CALLS]->(a) WHERE offset(id(a)) < offset(id(b)) AND offset(id(a)) < offset(id(c)) AND b <> c WITH DISTINCT a, b, c RETURN a.id, b.id, c.id LIMIT 100", {}),
  "cycle_varlen_1_3": ("MATCH (a:Symbol)-[p:CALLS*1..3]->(a) RETURN count(DISTINCT a)", {}),
  "cycle_varlen_trail_2_3": ("MATCH (a:Symbol)-[p:CALLS* TRAIL 2..3]->(a) RETURN count(DISTINCT a)", {}),
  "scc_parallel": ("CALL strongly_connected_components('cg') WITH group_id, count(*) AS n WHERE n > 1 RETURN count(*) AS sccs, sum(n) AS nodes, max(n) AS biggest", {"pre": [PROJ]}),
  "scc_kosaraju": ("CALL strongly_connected_components_kosaraju('cg') WITH group_id, count(*) AS n WHERE n > 1 RETURN count(*) AS sccs, sum(n) AS nodes, max(n) AS biggest", {"pre": [PROJ]}),
  "scc_project_graph_only": (PROJ, {}),
  "wcc": ("CALL weakly_connected_components('cg') WITH group_id, count(*) AS n RETURN count(*) AS comps, max(n) AS biggest", {"pre": [PROJ]}),
  # transitive callers
  "transitive_callers_random": ("MATCH (c)-[p:CALLS* SHORTEST 1..30]->(x:Symbol {id: $id}) RETURN count(*), max(length(p))", {"params": {"id": T["random"][0]}}),
  "transitive_callers_called": ("MATCH (c)-[p:CALLS* SHORTEST 1..30]->(x:Symbol {id: $id}) RETURN count(*), max(length(p))", {"params": {"id": T["called"][1]}}),
  "transitive_callers_hub": ("MATCH (c)-[p:CALLS* SHORTEST 1..30]->(x:Symbol {id: $id}) RETURN count(*), max(length(p))", {"params": {"id": HUB}}),
  "transitive_callees_random": ("MATCH (x:Symbol {id: $id})-[p:CALLS* SHORTEST 1..30]->(c:Symbol) RETURN count(*), max(length(p))", {"params": {"id": T["callers_random"][0]}}),
  "transitive_callers_hub_1_100": ("MATCH (c)-[p:CALLS* SHORTEST 1..100]->(x:Symbol {id: $id}) RETURN count(*), max(length(p))", {"params": {"id": HUB}}),
  "transitive_callers_hub_1_100_setting": ("MATCH (c)-[p:CALLS* SHORTEST 1..100]->(x:Symbol {id: $id}) RETURN count(*), max(length(p))", {"params": {"id": HUB}, "pre": ["CALL var_length_extend_max_depth=100"]}),
}
only = sys.argv[1].split(",") if len(sys.argv) > 1 else None
for name, (q, extra) in Q.items():
    if only and name not in only:
        continue
    arg = {"q": q, "timeout_ms": 60_000, "reps": 2, **extra}
    out = subprocess.run([PY, f"{HERE}/one.py", json.dumps(arg)], capture_output=True, text=True, timeout=600)
    try:
        r = json.loads(out.stdout.strip().splitlines()[-1])
    except Exception:
        r = {"error": (out.stderr or out.stdout)[-300:], "rc": out.returncode}
    r.update({"query": name})
    print(json.dumps(r), flush=True)
