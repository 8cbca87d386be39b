// A symbol's own call sites into definitions (the root of a call graph: its
// recursion, and its calls to the nodes the walk returned).
MATCH (x:Symbol {id: $id})-[e:CALLS]->(b:Symbol)
WHERE list_contains($tiers, e.confidence)
RETURN b.id, e.line, e.col, e.confidence
