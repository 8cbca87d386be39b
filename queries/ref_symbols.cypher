// Every symbol of a repo/ref, for import resolution.
MATCH (s:Symbol) WHERE s.repo = $repo AND s.ref = $ref
RETURN s.id, s.path, s.qualified_name, s.kind
