// Definitions named $name in one repo/ref, optionally in one file ($path = '' for any).
MATCH (s:Symbol)
WHERE s.repo = $repo AND s.ref = $ref AND s.name = $name AND ($path = '' OR s.path = $path)
RETURN s.id, s.stable_id, s.name, s.kind, s.qualified_name, s.path, s.language,
       s.line_start, s.line_end, s.signature, s.visibility, s.doc
ORDER BY s.path, s.line_start
