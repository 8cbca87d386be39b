// Symbols by primary key (`$ids`), with byte ranges and the enclosing symbol's
// id, name, kind and signature (null for a top-level symbol): what an answer shows
// of the symbols a name or search lookup chose.
UNWIND $ids AS x
MATCH (s:Symbol {id: x})
OPTIONAL MATCH (p:Symbol)-[:CONTAINS]->(s)
RETURN s.id, s.stable_id, s.name, s.kind, s.qualified_name, s.path, s.language,
       s.line_start, s.line_end, s.signature, s.visibility, s.doc,
       s.byte_start, s.byte_end, p.id, p.name, p.kind, p.signature
