// Symbols that only moved (lines or bytes) within their file: their positions.
MATCH (f:File)-[:CONTAINS*1..30]->(s:Symbol)
WHERE f.id IN $files
WITH s
UNWIND $rows AS r
WITH s, r
WHERE s.id = r.id
SET s.line_start = r.line_start, s.line_end = r.line_end,
    s.byte_start = r.byte_start, s.byte_end = r.byte_end
