// Nested symbols whose parent symbol exists (created earlier in this transaction,
// or kept), created with their CONTAINS edge. The parent is looked up by id (a
// scan of the Symbol table in Kuzu 0.11): walking down from the File instead is
// faster, but within a transaction that deleted and re-created symbols of the
// same ids the walk can meet a parent twice (seen: duplicate primary keys).
UNWIND $rows AS r
MATCH (p:Symbol) WHERE p.id = r.parent
CREATE (p)-[:CONTAINS]->(:Symbol {id: r.id, stable_id: r.stable_id, repo: r.repo, ref: r.ref,
        path: r.path, name: r.name, kind: r.kind, qualified_name: r.qualified_name,
        language: r.language, line_start: r.line_start, line_end: r.line_end,
        byte_start: r.byte_start, byte_end: r.byte_end, signature: r.signature,
        visibility: r.visibility, doc: r.doc})
