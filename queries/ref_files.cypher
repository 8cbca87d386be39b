// Every file of a repo/ref with its raw imports, for import resolution.
MATCH (f:File) WHERE f.repo = $repo AND f.ref = $ref
RETURN f.id, f.path, f.language, f.module, f.package, f.imports
