// The nested symbols of one parent symbol, the parent found by primary key,
// created with their CONTAINS edges in one statement: the form a big graph
// uses for symbols below their file's direct children (a statement per symbol
// took 83 statements, 21 ms, for syn's `item.rs`; `insert_symbols_under_symbol`
// finds each row's parent by a scan of the Symbol table).
MATCH (p:Symbol {id: $parent})
UNWIND $rows AS r
CREATE (p)-[:CONTAINS]->(:Symbol {id: r.id, stable_id: r.stable_id, repo: r.repo, ref: r.ref,
        path: r.path, name: r.name, kind: r.kind, qualified_name: r.qualified_name,
        language: r.language, line_start: r.line_start, line_end: r.line_end,
        byte_start: r.byte_start, byte_end: r.byte_end, signature: r.signature,
        visibility: r.visibility, doc: r.doc})
