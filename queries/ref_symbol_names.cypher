// What the server's catalog keeps of each symbol of a repo/ref: every property
// but the doc, with the byte range (see store/catalog.rs).
MATCH (s:Symbol) WHERE s.repo = $repo AND s.ref = $ref
RETURN s.id, s.stable_id, s.name, s.kind, s.qualified_name, s.path, s.language,
       s.line_start, s.line_end, s.signature, s.visibility, '' AS doc,
       s.byte_start, s.byte_end
