// Every file of a repo/ref, by path: the skeleton of trees and scopes.
MATCH (f:File) WHERE f.repo = $repo AND f.ref = $ref
RETURN f.id, f.path, f.language, f.module, f.package, f.content_hash, f.line_count
ORDER BY f.path
