import kuzu
exec(open("semantics.py").read().split("print(\"edges")[0])
for sem in ["", "TRAIL", "ACYCLIC"]:
    q = f"MATCH (c)-[e:CALLS* {sem} 1..5]->(x:S {{id:'X'}}) RETURN c.id AS cid, length(e) AS d, properties(nodes(e),'id') AS via, properties(rels(e),'line') AS lines, is_trail(e) AS tr, is_acyclic(e) AS ac ORDER BY d, cid"
    out = show(q)
    print(f"== {sem or 'WALK'} 1..5: {len(out)}; not trail {sum(1 for o in out if not o[4])}; not acyclic {sum(1 for o in out if not o[5])}")
    if sem == "ACYCLIC":
        for o in out: print("  ", o)
print("self-loop only graph: target A (A->A, B->A)")
for sem in ["", "TRAIL", "ACYCLIC", "SHORTEST", "ALL SHORTEST"]:
    print(sem or "WALK", show(f"MATCH (c)-[e:CALLS* {sem} 1..3]->(x:S {{id:'A'}}) WHERE c.id='A' RETURN length(e), properties(rels(e),'line')"))
print("callees of X (x)-[*]->(c) ACYCLIC 1..4:")
print(show("MATCH (x:S {id:'X'})-[e:CALLS* ACYCLIC 1..4]->(c) RETURN c.id, properties(nodes(e),'id'), properties(rels(e),'line'), is_acyclic(e)"))
print("both SHORTEST:", show("MATCH (c)-[e:CALLS* SHORTEST 1..2]-(x:S {id:'X'}) RETURN c.id, length(e) ORDER BY c.id"))
