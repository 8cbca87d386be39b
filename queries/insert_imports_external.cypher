UNWIND $rows AS r
MATCH (f:File {id: r.from}), (t:External {id: r.to})
CREATE (f)-[:IMPORTS {to_name: r.to_name, line: r.line, confidence: 'static', alias: r.alias}]->(t)
