MATCH (p:Package) WHERE p.repo = $repo AND p.ref = $ref DETACH DELETE p
