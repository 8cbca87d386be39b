// Every symbol nested under a symbol, with its direct parent, shallowest first.
MATCH (s:Symbol {id: $id})-[r:CONTAINS* ACYCLIC 1..30]->(c:Symbol)<-[:CONTAINS]-(p:Symbol)
RETURN c.id, c.stable_id, c.name, c.kind, c.qualified_name, c.path, c.language,
       c.line_start, c.line_end, c.signature, c.visibility, c.doc,
       length(r) AS depth, p.id AS parent_id
ORDER BY depth, c.line_start
