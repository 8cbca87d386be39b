// Every symbol of the given files (ids), found from the File through CONTAINS:
// a scan of the small File table and a walk down the tree, not a scan of every
// Symbol. 30 levels is the catalog's nesting bound (catalog::MAX_DEPTH).
MATCH (f:File)-[:CONTAINS*1..30]->(s:Symbol)
WHERE f.id IN $ids
DETACH DELETE s
