// Per repo/ref: files, symbols, import edges and unresolved (External) imports.
MATCH (r:Ref)
OPTIONAL MATCH (r)-[:HAS_FILE]->(f:File)
WITH r, count(f) AS files
RETURN r.repo, r.name, r.commit, r.indexed_at, files
ORDER BY r.repo, r.name
