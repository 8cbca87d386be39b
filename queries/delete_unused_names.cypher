// Name nodes no unresolved site points at any more (the caller leaves out
// names this transaction re-used, whose new edges EXISTS would not see).
UNWIND $ids AS id
MATCH (n:Name {id: id})
WHERE NOT EXISTS { MATCH (n)<-[:UNRESOLVED]-(:Symbol) }
  AND NOT EXISTS { MATCH (n)<-[:UNRESOLVED]-(:File) }
DELETE n
