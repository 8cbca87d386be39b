// Symbols whose parent is their file, created with their CONTAINS edge (one lookup
// per row: Kuzu plans a second node lookup from UNWIND as a cross product).
UNWIND $rows AS r
MATCH (f:File) WHERE f.id = r.parent
CREATE (f)-[:CONTAINS]->(:Symbol {id: r.id, stable_id: r.stable_id, repo: r.repo, ref: r.ref,
        path: r.path, name: r.name, kind: r.kind, qualified_name: r.qualified_name,
        language: r.language, line_start: r.line_start, line_end: r.line_end,
        byte_start: r.byte_start, byte_end: r.byte_end, signature: r.signature,
        visibility: r.visibility, doc: r.doc})
