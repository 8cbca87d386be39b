// How many import edges point at one symbol, found by primary key (see
// `symbols_in_degree` for the batched form a small graph uses).
MATCH (s:Symbol {id: $id})
OPTIONAL MATCH (:File)-[i:IMPORTS]->(s)
RETURN s.id, count(i) AS edges
