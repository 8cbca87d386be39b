// The top-level symbols of the files `$ids` (file ids), by id: what explore_tree
// shows of a file at the last level it expands, and find_related_symbols'
// `same_module`/`same_package`. A list of files is planned as a scan of the File
// table, which costs as much as one file's lookup by key (~1 ms).
MATCH (f:File)-[:CONTAINS]->(s:Symbol) WHERE f.id IN $ids
RETURN f.id, s.id
