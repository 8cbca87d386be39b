// The symbol directly enclosing a symbol (none for a top-level one): a search
// hit's header and get_code_context's `parent` expansion.
MATCH (p:Symbol)-[:CONTAINS]->(s:Symbol {id: $id})
RETURN p.id, p.name, p.kind, p.signature
