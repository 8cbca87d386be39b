// How many import edges point at each of the given symbols (ids); a symbol
// that no longer exists is left out.
UNWIND $ids AS sid
MATCH (s:Symbol {id: sid})
OPTIONAL MATCH (:File)-[i:IMPORTS]->(s)
RETURN s.id, count(i) AS edges
