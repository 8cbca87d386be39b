UNWIND $paths AS p
MATCH (s:Symbol) WHERE s.repo = $repo AND s.ref = $ref AND s.path = p
DETACH DELETE s
