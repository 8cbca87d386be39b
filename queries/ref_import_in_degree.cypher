// How many resolved import edges point at each symbol of a repo/ref (a ranking
// signal: a definition many files import comes before a leaf helper of that name).
MATCH (:File)-[i:IMPORTS]->(s:Symbol) WHERE s.repo = $repo AND s.ref = $ref
RETURN s.id, count(i) AS edges
