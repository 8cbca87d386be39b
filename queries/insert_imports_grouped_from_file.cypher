// Eight import edges out of one file in one statement: the file found once by
// primary key, each target by primary key (as in `insert_imports_grouped`,
// which finds the file again for every edge). On Python's lib/ 128 edges of
// one file into Symbol took 60-73 ms this way, 125-200 ms grouped by edge.
// `write::grouped_statement` keeps lines without {i} once, repeats the others
// for i = 0..8; {label} is the targets' table. The count is 0 when an end is
// missing; those rows then go one by one.
MATCH (f:File {id: $from})
MATCH (t{i}:{label} {id: $to{i}})
CREATE (f)-[:IMPORTS {to_name: $to_name{i}, line: $line{i}, confidence: 'static', alias: $alias{i}}]->(t{i})
