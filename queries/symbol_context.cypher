// A symbol's doc (the server's catalog keeps every property but the doc) and
// what directly holds it: an enclosing symbol, or its file when it is top-level.
// For the symbols an answer shows: search hits' docs and enclosing types,
// get_code_context's `parent` expansion, locate_symbol's docs.
MATCH (p)-[:CONTAINS]->(s:Symbol {id: $id})
RETURN s.doc, p.id, label(p) = 'File' AS is_file
