// One import edge to a File node, both ends found by primary key (see
// `insert_import_symbol`).
MATCH (f:File {id: $from}), (t:File {id: $to})
CREATE (f)-[:IMPORTS {to_name: $to_name, line: $line, confidence: 'static', alias: $alias}]->(t)
