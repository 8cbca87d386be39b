// The symbol directly enclosing a symbol (none for a top-level one): a search
// hit's enclosing type and get_code_context's `parent` expansion.
MATCH (p:Symbol)-[:CONTAINS]->(s:Symbol {id: $id})
RETURN p.id
