// Every symbol nested under a symbol, with its depth and the ids of the symbols
// between (its direct parent is the last, or the start symbol when there are
// none): reading the path costs less than joining each row to its parent.
MATCH (s:Symbol {id: $id})-[r:CONTAINS* TRAIL 1..30]->(c:Symbol)
RETURN c.id, length(r) AS depth, properties(nodes(r), 'id') AS via
