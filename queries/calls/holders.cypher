// The classes whose body declares an attribute of the given type (Python
// `application: App`; a TypeScript field `app: App`, from the field): an
// object a library base may hold and call (`analyze_impact`).
MATCH (h:Symbol)-[r:REFERENCES]->(x:Symbol {id: $id})
WHERE r.kind = 'type' AND h.kind IN ['class', 'field']
RETURN DISTINCT h.id AS holder, h.kind AS kind
