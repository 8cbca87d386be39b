// What implements or extends a trait, interface or class, transitively (a
// bounded breadth-first search), with the relationships along the way.
MATCH (t:Symbol)-[p:IMPLEMENTS|EXTENDS* SHORTEST 1..8]->(x:Symbol {id: $id})
RETURN t.id, length(p), list_transform(rels(p), r -> label(r))
