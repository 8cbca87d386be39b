// Every symbol of the given files with its direct parent (the file or a symbol) and
// its depth below the file. ACYCLIC and the bound keep a damaged graph harmless.
MATCH (f:File)-[r:CONTAINS* ACYCLIC 1..30]->(s:Symbol)<-[:CONTAINS]-(p)
WHERE f.id IN $ids
RETURN s.id, s.stable_id, s.name, s.kind, s.qualified_name, s.path, s.language,
       s.line_start, s.line_end, s.signature, s.visibility, s.doc,
       f.id AS file_id, length(r) AS depth, p.id AS parent_id
ORDER BY s.path, s.line_start, depth
