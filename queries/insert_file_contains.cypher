UNWIND $rows AS r
MATCH (f:File {id: r.from}), (s:Symbol {id: r.to})
CREATE (f)-[:CONTAINS]->(s)
