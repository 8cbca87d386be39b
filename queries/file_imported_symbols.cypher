// Definitions a file imports. Only resolved edges: External targets are skipped.
MATCH (f:File {id: $id})-[i:IMPORTS]->(s:Symbol)
RETURN s.id, s.stable_id, s.name, s.kind, s.qualified_name, s.path, s.language,
       s.line_start, s.line_end, s.signature, s.visibility, s.doc, i.line
ORDER BY i.line, s.path, s.line_start
