// Every symbol nested under a symbol, shallowest first and in position order,
// with the ids of the symbols between (its direct parent is the last, or the
// start symbol when there are none): reading the path is cheaper than joining
// each row to its parent.
MATCH (s:Symbol {id: $id})-[r:CONTAINS* ACYCLIC 1..30]->(c:Symbol)
RETURN c.id, c.stable_id, c.name, c.kind, c.qualified_name, c.path, c.language,
       c.line_start, c.line_end, c.signature, c.visibility, c.doc,
       length(r) AS depth, properties(nodes(r), 'id') AS via, c.byte_start, c.byte_end
ORDER BY depth, c.line_start, c.byte_start, c.byte_end DESC, c.id
