MATCH (f:File) WHERE f.repo = $repo AND f.ref = $ref
RETURN f.path, f.content_hash
