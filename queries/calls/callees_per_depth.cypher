// How many distinct callees a symbol has at each distance up to {depth}.
MATCH (x:Symbol {id: $id})-[p:CALLS* SHORTEST 1..{depth} (r, n | WHERE list_contains({tiers}, r.confidence))]->(c:Symbol)
RETURN length(p) AS depth, count(*)
ORDER BY depth
