// Every symbol of the files `$ids` (file ids), with its byte range, its file, its
// depth and the ids on the path from the file to it: the files' CONTAINS trees in
// one statement (the caller reads each symbol's parent off the path).
MATCH (f:File)-[r:CONTAINS* ACYCLIC 1..30]->(s:Symbol) WHERE f.id IN $ids
RETURN s.id, s.stable_id, s.name, s.kind, s.qualified_name, s.path, s.language,
       s.line_start, s.line_end, s.signature, s.visibility, s.doc,
       s.byte_start, s.byte_end, f.id, length(r) AS depth, properties(nodes(r), 'id') AS via
