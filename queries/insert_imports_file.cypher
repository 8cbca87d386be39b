// A batch of import edges; Kuzu 0.11 looks both ends up by a filtered cross
// product of the rows with each table, so a big graph writes them one by one
// (`insert_import_*`, see `write::Keyed`).
UNWIND $rows AS r
MATCH (t:File {id: r.to})
MATCH (f:File {id: r.from})
CREATE (f)-[:IMPORTS {to_name: r.to_name, line: r.line, confidence: 'static', alias: r.alias}]->(t)
