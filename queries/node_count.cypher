// How many nodes a table holds (all refs): whether a statement that scans it
// once per row is cheaper than lookups by key (see `insert_imports_from_file`).
MATCH (n:{label})
RETURN count(n)
