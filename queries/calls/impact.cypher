// What a change to a symbol can break within {depth} steps: everything that
// calls, references, implements or extends it, each once at its shortest
// distance, with its own outgoing edges of those kinds (the client picks the
// one toward the change: `via`), and how many `name`-tier edges point at it (left
// out when `{tiers}` excludes them: the answer is then a lower bound).
MATCH (c)-[p:CALLS|REFERENCES|IMPLEMENTS|EXTENDS* SHORTEST 1..{depth} (r, n | WHERE list_contains({tiers}, r.confidence))]->(x:Symbol {id: $id})
WITH c, length(p) AS depth
ORDER BY depth, c.id
LIMIT $max
OPTIONAL MATCH (c)-[e:CALLS|REFERENCES|IMPLEMENTS|EXTENDS]->(b:Symbol)
WHERE list_contains({tiers}, e.confidence)
RETURN c.id, label(c) = 'File', depth, collect({to: b.id, rel: label(e)}),
       COUNT { MATCH (z)-[g:CALLS|REFERENCES]->(c) WHERE g.confidence = 'name' }
