// Every resolved File -> Symbol import edge of a repo/ref, as (importing file's
// path, imported symbol's id): the server keeps them in memory for ranking
// (in-degree) and for get_code_context's expansion (what a hit's file imports).
MATCH (f:File)-[:IMPORTS]->(s:Symbol) WHERE s.repo = $repo AND s.ref = $ref
RETURN f.path, s.id
