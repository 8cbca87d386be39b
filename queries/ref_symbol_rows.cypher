// Every symbol of a repo/ref with its byte range: what a search index is rebuilt from.
MATCH (s:Symbol) WHERE s.repo = $repo AND s.ref = $ref
RETURN s.id, s.stable_id, s.name, s.kind, s.qualified_name, s.path, s.language,
       s.line_start, s.line_end, s.signature, s.visibility, s.doc, s.byte_start, s.byte_end
