// The enclosing symbols of a symbol and, last, its file: ids with their distance.
// CONTAINS forms a tree, so each distance is one node; ACYCLIC and the depth
// bound make any damage harmless. Ids only: the server's catalog (or, in the
// CLI, a lookup by key) supplies the rows, which halves the walk's cost.
MATCH (a)-[r:CONTAINS* ACYCLIC 1..30]->(s:Symbol {id: $id})
RETURN a.id, label(a) = 'File' AS is_file, length(r) AS depth
ORDER BY depth
