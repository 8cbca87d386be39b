// The enclosing symbol of each nested symbol of a repo/ref in the files $paths
// (as `ref_range_parents`): (id, parent id).
MATCH (p:Symbol)-[:CONTAINS]->(s:Symbol)
WHERE p.repo = $repo AND p.ref = $ref AND list_contains($paths, p.path)
RETURN s.id, p.id
