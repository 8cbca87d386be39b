// A changed file whose language, module, package and imports stay: only its hash
// and counts are rewritten (rewriting a string column in place costs Kuzu a
// copy of the column at the checkpoint, and grows the database file).
UNWIND $rows AS r
MATCH (f:File) WHERE f.id = r.id
SET f.content_hash = r.content_hash, f.line_count = r.line_count, f.size = r.size,
    f.error_lines = r.error_lines, f.recovered = r.recovered
