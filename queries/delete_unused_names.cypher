// Name nodes no unresolved site points at any more. DETACH: in Kuzu 0.11.3 a
// plain DELETE of such a node still found edges in the same transaction
// (ones deleted with their source symbols), which no query sees.
UNWIND $ids AS id
MATCH (n:Name {id: id})
WHERE NOT EXISTS { MATCH (n)<-[:UNRESOLVED]-(:Symbol) }
  AND NOT EXISTS { MATCH (n)<-[:UNRESOLVED]-(:File) }
DETACH DELETE n
