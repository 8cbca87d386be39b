// One import edge into a symbol, the importing file found by primary key. For
// a few edges this beats `delete_imports_symbol`, which Kuzu 0.11 plans as a
// scan of every Symbol per batch (~60 ms however few rows on a 600k-symbol
// graph, against ~2 ms an edge this way).
MATCH (f:File {id: $from})-[e:IMPORTS]->(t:Symbol)
WHERE t.id = $to AND e.to_name = $to_name AND e.line = $line AND e.alias = $alias
DELETE e
