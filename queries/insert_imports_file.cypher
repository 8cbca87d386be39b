// A batch of import edges into File nodes.
// Both ends are found by hash joins of the rows with their tables (the key a
// variable, as in `insert_site_edges`): one scan of each table.
UNWIND $rows AS r
WITH r, r.from AS fr
MATCH (f:File) WHERE f.id = fr
WITH f, r, r.to AS to
MATCH (t:File) WHERE t.id = to
CREATE (f)-[:IMPORTS {to_name: r.to_name, line: r.line, confidence: 'static', alias: r.alias}]->(t)
