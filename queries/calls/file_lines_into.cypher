// What a file's top-level code calls or references (every tier), with the
// line: a module-level value (`out = make(f)`) depends on what its line does.
MATCH (f:File {id: $id})-[e:CALLS|REFERENCES]->(t:Symbol)
RETURN t.id, e.line, label(e)
