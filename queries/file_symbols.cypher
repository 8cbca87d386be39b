// The first `$limit` symbols of a file in position order (path, line, start,
// longest first: depth first, as nested), with byte ranges: find_related_symbols'
// `same_file`.
MATCH (f:File {id: $id})-[:CONTAINS* ACYCLIC 1..30]->(s:Symbol)
RETURN s.id, s.stable_id, s.name, s.kind, s.qualified_name, s.path, s.language,
       s.line_start, s.line_end, s.signature, s.visibility, s.doc,
       s.byte_start, s.byte_end
ORDER BY s.line_start, s.byte_start, s.byte_end DESC, s.id
LIMIT $limit
