MATCH (f:File)-[:IMPORTS]->(x)
RETURN f.repo, f.ref, count(*) AS edges, sum(CASE WHEN label(x) = 'External' THEN 1 ELSE 0 END) AS unresolved
