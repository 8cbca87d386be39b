// Definitions whose name equals $name ignoring case ($name is lower-case).
MATCH (s:Symbol)
WHERE s.repo = $repo AND s.ref = $ref AND lower(s.name) = $name
RETURN s.id, s.stable_id, s.name, s.kind, s.qualified_name, s.path, s.language,
       s.line_start, s.line_end, s.signature, s.visibility, s.doc
ORDER BY s.path, s.line_start
