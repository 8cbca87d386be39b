// The CONTAINS tree of a repo/ref: each symbol's direct parent (a File or a Symbol).
MATCH (p)-[:CONTAINS]->(s:Symbol) WHERE s.repo = $repo AND s.ref = $ref
RETURN p.id, s.id, label(p) = 'File' AS from_file
