// The target is matched first: Kuzu joins the first lookup from UNWIND by hash and
// the second by scan, and files are fewer than targets.
UNWIND $rows AS r
MATCH (t:Symbol {id: r.to})
MATCH (f:File {id: r.from})
CREATE (f)-[:IMPORTS {to_name: r.to_name, line: r.line, confidence: 'static', alias: r.alias}]->(t)
