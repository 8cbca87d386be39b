// How many `name`-tier edges point at a symbol.
MATCH (z)-[g:CALLS|REFERENCES]->(x:Symbol {id: $id})
WHERE g.confidence = 'name'
RETURN count(*)
