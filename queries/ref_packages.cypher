// A ref's Go packages with their member files (null for a package without any).
MATCH (p:Package) WHERE p.repo = $repo AND p.ref = $ref
OPTIONAL MATCH (f:File)-[:IN_PACKAGE]->(p)
RETURN p.id, f.id
