// Given import edges into File nodes. The target's label is named: without it
// Kuzu 0.11 reads the id of every neighbour in every node table (~18 ms an edge
// on a 600k-symbol graph, against ~0.1 ms).
UNWIND $rows AS r
MATCH (f:File) WHERE f.id = r.from
MATCH (f)-[e:IMPORTS]->(t:File)
WHERE t.id = r.to AND e.to_name = r.to_name AND e.line = r.line AND e.alias = r.alias
DELETE e
