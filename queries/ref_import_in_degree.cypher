// How many import edges point at each symbol of a repo/ref: a ranking signal.
MATCH (:File)-[:IMPORTS]->(s:Symbol) WHERE s.repo = $repo AND s.ref = $ref
RETURN s.id, count(*) AS n
