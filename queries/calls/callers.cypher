// Everything that calls a symbol within {depth} calls, each once at its
// shortest distance (`SHORTEST` is a breadth-first search: each node once,
// bounded by the edges it reaches, so a cycle cannot loop; walks and TRAIL
// enumerate paths and ACYCLIC is broken in Kuzu 0.11.3), with each caller's
// own call sites by the internal id of their target, so the client keeps the
// edges among the nodes it returns. A caller may be a File (top-level code).
// `{depth}` and `{tiers}` (a list) are written into the text: Kuzu takes no
// parameter as a recursion bound, nor in a prepared recursive predicate.
// The call sites are neither filtered nor joined to their target's table
// here: either made the statement 20-80 times slower on a 600k-symbol graph.
MATCH (c)-[p:CALLS* SHORTEST 1..{depth} (r, n | WHERE list_contains({tiers}, r.confidence))]->(x:Symbol {id: $id})
WITH c, length(p) AS depth
ORDER BY depth, c.id
LIMIT $max
OPTIONAL MATCH (c)-[e:CALLS]->(b)
RETURN c.id, label(c) = 'File', id(c), depth,
       collect({to: id(b), line: e.line, col: e.col, confidence: e.confidence})
