// Name nodes no unresolved site points at any more.
UNWIND $ids AS id
MATCH (n:Name {id: id})
WHERE NOT EXISTS { MATCH (n)<-[:UNRESOLVED]-() }
DELETE n
