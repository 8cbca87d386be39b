// The stored symbols of the given files (ids) with their byte ranges and their
// parent's id (a symbol, or the file itself): what a re-parsed file's
// definitions are diffed against, so unchanged symbols stay as they are.
MATCH (f:File)-[:CONTAINS*1..30]->(s:Symbol)
WHERE f.id IN $ids
MATCH (p)-[:CONTAINS]->(s)
RETURN f.id, s.id, s.stable_id, s.name, s.kind, s.qualified_name, s.path, s.language,
       s.line_start, s.line_end, s.signature, s.visibility, s.doc, s.byte_start, s.byte_end, p.id
