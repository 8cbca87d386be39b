// Definitions whose name contains $pattern ignoring case ($pattern is lower-case),
// at most 1000 (callers cap what they show well below that).
MATCH (s:Symbol)
WHERE s.repo = $repo AND s.ref = $ref AND contains(lower(s.name), $pattern)
RETURN s.id, s.stable_id, s.name, s.kind, s.qualified_name, s.path, s.language,
       s.line_start, s.line_end, s.signature, s.visibility, s.doc
ORDER BY s.path, s.line_start
LIMIT 1000
