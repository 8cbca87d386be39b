// Name nodes of unresolved sites (see schema/003_calls.cypher).
UNWIND $rows AS r
MERGE (n:Name {id: r.id})
ON CREATE SET n.repo = r.repo, n.ref = r.ref, n.name = r.name
