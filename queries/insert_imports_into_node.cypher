// Import edges from many files into one `{label}` node (the importers of a
// module that came or went): the target found by key, each file by a scan of
// the File table's ids (see `insert_imports_from_file`). A row whose file is
// missing creates nothing.
MATCH (t:{label} {id: $to})
UNWIND $rows AS r
MATCH (f:File)
WHERE f.id = r.from
CREATE (f)-[:IMPORTS {to_name: r.to_name, line: r.line, confidence: 'static', alias: r.alias}]->(t)
RETURN count(*)
