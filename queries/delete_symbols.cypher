// Given symbols (ids) of the given files (ids), found from their File.
MATCH (f:File)-[:CONTAINS*1..30]->(s:Symbol)
WHERE f.id IN $files AND s.id IN $ids
DETACH DELETE s
