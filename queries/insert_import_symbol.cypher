// One import edge to a symbol, both ends found by primary key (an index lookup):
// in a big graph this beats `insert_imports_symbol`, which Kuzu 0.11 plans as a
// scan of every Symbol per batch row.
MATCH (f:File {id: $from}), (t:Symbol {id: $to})
CREATE (f)-[:IMPORTS {to_name: $to_name, line: $line, confidence: 'static', alias: $alias}]->(t)
