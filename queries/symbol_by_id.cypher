// A symbol by primary key, with its byte range: a doc the catalog does not keep,
// and the CLI's rows (run once per id: Kuzu 0.11 looks up a primary key only
// for a single value; a list or UNWIND scans the table).
MATCH (s:Symbol {id: $id})
RETURN s.id, s.stable_id, s.name, s.kind, s.qualified_name, s.path, s.language,
       s.line_start, s.line_end, s.signature, s.visibility, s.doc,
       s.byte_start, s.byte_end
