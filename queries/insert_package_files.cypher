// The package is matched first (fewer than files; see insert_imports_file).
UNWIND $rows AS r
MATCH (p:Package {id: r.package})
MATCH (f:File {id: r.file})
CREATE (f)-[:IN_PACKAGE]->(p)
