// Every site that uses a symbol: calls, other references (type, value,
// construct, extends, implements) and imports of it, with where each is (the
// enclosing symbol or, for top-level code and imports, the file).
MATCH (c)-[e:CALLS|REFERENCES|IMPORTS]->(x:Symbol {id: $id})
RETURN label(e), c.id, label(c) = 'File', c.path, e.line, e.col, e.kind, e.confidence
