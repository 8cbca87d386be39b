// What the server keeps of each symbol of a repo/ref to find symbols by name and
// rank them: its id, names, file, kind and position (no signature, doc or edges).
MATCH (s:Symbol) WHERE s.repo = $repo AND s.ref = $ref
RETURN s.id, s.name, s.qualified_name, s.path, s.kind, s.language, s.line_start, s.byte_start, s.byte_end
