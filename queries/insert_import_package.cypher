// One import edge to a Package node, both ends found by primary key (see
// `insert_import_symbol`).
MATCH (f:File {id: $from}), (t:Package {id: $to})
CREATE (f)-[:IMPORTS {to_name: $to_name, line: $line, confidence: 'static', alias: $alias}]->(t)
