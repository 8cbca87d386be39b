// One edge per Go import of a package (its files hang off it by IN_PACKAGE).
UNWIND $rows AS r
MATCH (t:Package {id: r.to})
MATCH (f:File {id: r.from})
CREATE (f)-[:IMPORTS {to_name: r.to_name, line: r.line, confidence: 'static', alias: r.alias}]->(t)
