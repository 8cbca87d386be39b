// The first `$limit` top-level symbols of the files `$ids` (file ids) in position
// order, with byte ranges: find_related_symbols' `same_module`/`same_package`.
MATCH (f:File)-[:CONTAINS]->(s:Symbol) WHERE f.id IN $ids
RETURN s.id, s.stable_id, s.name, s.kind, s.qualified_name, s.path, s.language,
       s.line_start, s.line_end, s.signature, s.visibility, s.doc,
       s.byte_start, s.byte_end
ORDER BY s.path, s.line_start, s.byte_start, s.byte_end DESC, s.id
LIMIT $limit
