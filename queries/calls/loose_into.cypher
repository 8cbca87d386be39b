// Edges into the given symbols that prove no call: calls found by a unique
// name only (tier `name`), and uses as a value (a function passed, stored or
// returned: what calls it through that value is not seen).
MATCH (c)-[e:CALLS|REFERENCES]->(x:Symbol {id: $id})
WHERE e.confidence = 'name' OR e.kind = 'value'
RETURN x.id AS target, label(e) = 'CALLS' AS is_call, label(c) = 'File' AS is_file,
       c.id AS from_id, c.path AS path, e.line AS line, e.col AS col
