// One import edge, its file found by primary key (see `delete_imports` for the
// batched form a small graph uses).
MATCH (f:File {id: $from})-[e:IMPORTS]->(t)
WHERE t.id = $to AND e.to_name = $to_name AND e.line = $line AND e.alias = $alias
DELETE e
