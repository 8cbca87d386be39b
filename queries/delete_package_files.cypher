UNWIND $rows AS r
MATCH (f:File {id: r.file})-[e:IN_PACKAGE]->(p:Package {id: r.package})
DELETE e
