// What a type implements or extends, transitively (a bounded breadth-first
// search), with the relationships along the way.
MATCH (x:Symbol {id: $id})-[p:IMPLEMENTS|EXTENDS* SHORTEST 1..8]->(t:Symbol)
RETURN t.id, length(p), list_transform(rels(p), r -> label(r))
