// The functions and methods that call a symbol directly (one hop, by key):
// get_code_context's `caller` candidates.
MATCH (c:Symbol)-[e:CALLS]->(x:Symbol {id: $id})
RETURN c.id, e.confidence
