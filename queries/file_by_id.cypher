// One file by id (the id is derived from repo, ref and path).
MATCH (f:File {id: $id})
RETURN f.id, f.path, f.language, f.module, f.package, f.content_hash, f.line_count
