// Everything a symbol calls within {depth} calls, each once at its shortest
// distance, with each callee's own call sites (see callers.cypher).
MATCH (x:Symbol {id: $id})-[p:CALLS* SHORTEST 1..{depth} (r, n | WHERE list_contains({tiers}, r.confidence))]->(c:Symbol)
WITH c, length(p) AS depth
ORDER BY depth, c.id
LIMIT $max
OPTIONAL MATCH (c)-[e:CALLS]->(b)
RETURN c.id, false, id(c), depth,
       collect({to: id(b), line: e.line, col: e.col, confidence: e.confidence})
