MATCH (f:File) WHERE f.repo = $repo AND f.ref = $ref DETACH DELETE f
