// What the given symbols call that no tier proved: unresolved calls (any
// name) and calls found by a unique name only (tier `name`), with the name
// called.
MATCH (c:Symbol {id: $id})-[u:UNRESOLVED]->(n:Name)
WHERE u.kind = 'call'
RETURN n.name AS name, false AS by_name, false AS is_file, c.id AS from_id, c.path AS path,
       u.line AS line, u.col AS col
UNION ALL
MATCH (c:Symbol {id: $id})-[e:CALLS]->(b:Symbol)
WHERE e.confidence = 'name'
RETURN b.name AS name, true AS by_name, false AS is_file, c.id AS from_id, c.path AS path,
       e.line AS line, e.col AS col
