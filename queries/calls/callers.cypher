// Everything that calls a symbol within {depth} calls, each once at its
// shortest distance (`SHORTEST` is a breadth-first search: each node once,
// bounded by the edges it reaches, so a cycle cannot loop; walks and TRAIL
// enumerate paths and ACYCLIC is broken in Kuzu 0.11.3), with each caller's
// own outgoing calls so the client keeps the edges among the nodes it returns.
// A caller may be a File (top-level code). `{depth}` is written into the text:
// Kuzu takes no parameter as a recursion bound, and a prepared statement none in
// a recursive pattern's predicate: so are the tiers kept, `{tiers}` (a list).
MATCH (c)-[p:CALLS* SHORTEST 1..{depth} (r, n | WHERE list_contains({tiers}, r.confidence))]->(x:Symbol {id: $id})
WITH c, length(p) AS depth
ORDER BY depth, c.id
LIMIT $max
OPTIONAL MATCH (c)-[e:CALLS]->(b:Symbol)
WHERE list_contains({tiers}, e.confidence)
RETURN c.id, label(c) = 'File', depth,
       collect({to: b.id, line: e.line, col: e.col, confidence: e.confidence})
