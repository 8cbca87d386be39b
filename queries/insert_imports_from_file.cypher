// Import edges out of one file into `{label}` nodes: the file found by key,
// each target by its id in the rows. Kuzu 0.11 finds a row's target by a scan
// of the target table's ids (~8 ns a node), not its index, so this is used only
// for many edges out of one file into a table of at most tens of thousands of
// nodes (External, File, Package): ~0.25 ms an edge against ~1 ms by key
// (`insert_imports_grouped`). A row whose target is missing creates nothing.
MATCH (f:File {id: $from})
UNWIND $rows AS r
MATCH (t:{label})
WHERE t.id = r.to
CREATE (f)-[:IMPORTS {to_name: r.to_name, line: r.line, confidence: 'static', alias: r.alias}]->(t)
RETURN count(*)
