UNWIND $rows AS r
MATCH (f:File) WHERE f.id = r.from
MATCH (f)-[e:IMPORTS]->(t)
WHERE t.id = r.to AND e.to_name = r.to_name AND e.line = r.line AND e.alias = r.alias
DELETE e
