// How many distinct callers a symbol has at each distance up to {depth}: the
// exact totals of an answer cut at its limit (no property read: cheap).
MATCH (c)-[p:CALLS* SHORTEST 1..{depth} (r, n | WHERE list_contains({tiers}, r.confidence))]->(x:Symbol {id: $id})
RETURN length(p) AS depth, count(*)
ORDER BY depth
