// The calls a library answers that hold an instance of a repo class: `UNRESOLVED`
// rows whose Name is that class's qualified name, of kind `library` (a call
// a library base answers on the instance) or `handed` (the instance handed to
// a library's call). The library may call the class back there (its
// overrides, what it holds; any method of an object handed over), so
// `analyze_impact` reaches these callers from the class's methods.
MATCH (n:Name {id: $id})<-[u:UNRESOLVED]-(c)
WHERE u.kind IN ['library', 'handed']
RETURN c.id AS from_id, label(c) = 'File' AS is_file, u.to_name AS to_name, u.kind = 'handed' AS handed
