// The catalog's rows (as `ref_symbol_names`) of the symbols of a repo/ref in the
// files $paths: what a replica reads again of the files a generation changed.
MATCH (s:Symbol)
WHERE s.repo = $repo AND s.ref = $ref AND list_contains($paths, s.path)
RETURN s.id, s.stable_id, s.name, s.kind, s.qualified_name, s.path, s.language,
       s.line_start, s.line_end, s.signature, s.visibility, s.doc,
       s.byte_start, s.byte_end
