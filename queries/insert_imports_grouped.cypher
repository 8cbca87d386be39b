// Eight import edges in one statement, each end found by primary key (an index
// lookup, as in `insert_import_symbol`): on a big graph a statement per edge
// costs ~0.8 ms, eight in one ~0.5 ms each (217 edges of a renamed Python
// file: 164 ms one by one). `write::grouped_statement` repeats the MATCH and
// CREATE lines for i = 0..8 and {label} is the target's table. The count is 0
// when an end is missing; those rows then go one by one.
MATCH (f{i}:File {id: $from{i}}), (t{i}:{label} {id: $to{i}})
CREATE (f{i})-[:IMPORTS {to_name: $to_name{i}, line: $line{i}, confidence: 'static', alias: $alias{i}}]->(t{i})
