// What a change to a symbol can break within {depth} steps: everything that
// calls, references, implements or extends it, each once at its shortest
// distance, with its own edges of those kinds by the internal id of their
// target (the client picks the one toward the change: `via`). Filtering or
// joining those edges here made the statement far slower (see callers.cypher).
MATCH (c)-[p:CALLS|REFERENCES|IMPLEMENTS|EXTENDS* SHORTEST 1..{depth} (r, n | WHERE list_contains({tiers}, r.confidence))]->(x:Symbol {id: $id})
WITH c, length(p) AS depth
ORDER BY depth, c.id
LIMIT $max
OPTIONAL MATCH (c)-[e:CALLS|REFERENCES|IMPLEMENTS|EXTENDS]->(b)
RETURN c.id, label(c) = 'File', id(c), depth,
       collect({to: id(b), rel: label(e), confidence: e.confidence})
