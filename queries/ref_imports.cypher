// Every import edge of a repo/ref.
MATCH (f:File)-[e:IMPORTS]->(t)
WHERE f.repo = $repo AND f.ref = $ref
RETURN f.id, label(t), t.id, e.to_name, e.line, e.alias
