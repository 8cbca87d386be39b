// Given import edges into File nodes. The target's label is named: without it
// Kuzu 0.11 reads the id of every neighbour in every node table (~18 ms an edge
// on a 600k-symbol graph, against ~0.1 ms). The file is found by a hash join
// (the key a variable, as in `insert_site_edges`).
UNWIND $rows AS r
WITH r, r.from AS fr
MATCH (f:File) WHERE f.id = fr
MATCH (f)-[e:IMPORTS]->(t:File)
WHERE t.id = r.to AND e.to_name = r.to_name AND e.line = r.line AND e.alias = r.alias
DELETE e
