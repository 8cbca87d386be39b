// Symbols whose definition moved or changed but kept its id and parent: their
// properties are rewritten in place (their edges, imports included, stay).
MATCH (f:File)-[:CONTAINS*1..30]->(s:Symbol)
WHERE f.id IN $files
WITH s
UNWIND $rows AS r
WITH s, r
WHERE s.id = r.id
SET s.stable_id = r.stable_id, s.name = r.name, s.kind = r.kind,
    s.qualified_name = r.qualified_name, s.language = r.language,
    s.line_start = r.line_start, s.line_end = r.line_end,
    s.byte_start = r.byte_start, s.byte_end = r.byte_end,
    s.signature = r.signature, s.visibility = r.visibility, s.doc = r.doc
