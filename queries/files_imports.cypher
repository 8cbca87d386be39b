// The definitions the files `$ids` (file ids) import, one row per resolved edge
// (External targets are skipped): get_code_context's expansion of its best hits.
MATCH (f:File)-[:IMPORTS]->(s:Symbol) WHERE f.id IN $ids
RETURN f.id, s.id
