// The enclosing symbol of each nested symbol of a repo/ref whose path is in
// [$from, $to) ($to = '' for no end): (id, parent id). A symbol's parent is
// in its file, so the range is asked of the parent: Kuzu then scans the
// parents and follows their edges, where a range on the child joined the
// whole CONTAINS table.
MATCH (p:Symbol)-[:CONTAINS]->(s:Symbol)
WHERE p.repo = $repo AND p.ref = $ref AND p.path >= $from AND ($to = '' OR p.path < $to)
RETURN s.id, p.id
