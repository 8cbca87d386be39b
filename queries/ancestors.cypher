// The parent chain of a symbol, nearest first: enclosing symbols, then its file.
// CONTAINS forms a tree; ACYCLIC and the depth bound make any damage harmless.
MATCH (a)-[r:CONTAINS* ACYCLIC 1..30]->(s:Symbol {id: $id})
RETURN label(a) AS label, a.id, a.stable_id, a.name, a.kind, a.qualified_name, a.path,
       a.language, a.line_start, a.line_end, a.signature, a.visibility, a.doc,
       length(r) AS depth
ORDER BY depth
