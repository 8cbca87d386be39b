MATCH (s:Symbol) WHERE s.repo = $repo AND s.ref = $ref DETACH DELETE s
