// A changed file keeps its node (and the IMPORTS edges that point at it).
UNWIND $rows AS r
MATCH (f:File) WHERE f.id = r.id
SET f.language = r.language, f.module = r.module, f.package = r.package,
    f.content_hash = r.content_hash, f.line_count = r.line_count, f.size = r.size,
    f.error_lines = r.error_lines, f.recovered = r.recovered
