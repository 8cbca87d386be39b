MATCH (x:External) WHERE x.repo = $repo AND x.ref = $ref RETURN x.id
