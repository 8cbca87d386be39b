UNWIND $rows AS r
MATCH (p:Symbol {id: r.from}), (s:Symbol {id: r.to})
CREATE (p)-[:CONTAINS]->(s)
