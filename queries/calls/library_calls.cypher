// The calls a library base answers on instances of a repo class: `UNRESOLVED`
// rows of kind `library`, whose Name is that class's qualified name. The
// library may call the class back there (its overrides, what it holds), so
// `analyze_impact` reaches these callers from the class's methods.
MATCH (n:Name {id: $id})<-[u:UNRESOLVED]-(c)
WHERE u.kind = 'library'
RETURN c.id AS from_id, label(c) = 'File' AS is_file, u.to_name AS to_name
