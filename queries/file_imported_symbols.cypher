// Definitions a file imports, with the import's line. Only resolved edges:
// External targets and whole modules are skipped.
MATCH (f:File {id: $id})-[i:IMPORTS]->(s:Symbol)
RETURN s.id, i.line
ORDER BY i.line
