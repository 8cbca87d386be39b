// The first `$max` of the sites `unproven_count.cypher` counts, in path and
// line order, with where each is (the enclosing symbol, or the file for
// top-level code).
MATCH (n:Name {id: $id})<-[u:UNRESOLVED]-(c)
WHERE list_contains($kinds, u.kind)
RETURN n.name AS name, false AS by_name, label(c) = 'File' AS is_file, c.id AS from_id,
       c.path AS path, u.line AS line, u.col AS col
ORDER BY path, line, col
LIMIT $max
