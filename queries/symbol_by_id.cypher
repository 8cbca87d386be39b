// One symbol with its byte range in the file.
MATCH (s:Symbol {id: $id})
RETURN s.id, s.stable_id, s.name, s.kind, s.qualified_name, s.path, s.language,
       s.line_start, s.line_end, s.signature, s.visibility, s.doc,
       s.byte_start, s.byte_end
