// Nested symbols whose parent symbol exists (created earlier in this transaction,
// or kept), created with their CONTAINS edge. Parents are found from their File
// ($files), not by scanning every Symbol.
MATCH (f:File)-[:CONTAINS*1..30]->(p:Symbol)
WHERE f.id IN $files
WITH p
UNWIND $rows AS r
WITH p, r
WHERE p.id = r.parent
CREATE (p)-[:CONTAINS]->(:Symbol {id: r.id, stable_id: r.stable_id, repo: r.repo, ref: r.ref,
        path: r.path, name: r.name, kind: r.kind, qualified_name: r.qualified_name,
        language: r.language, line_start: r.line_start, line_end: r.line_end,
        byte_start: r.byte_start, byte_end: r.byte_end, signature: r.signature,
        visibility: r.visibility, doc: r.doc})
