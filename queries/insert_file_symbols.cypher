// The symbols directly in one file, each with its direct children, the file
// found by primary key: the form a big graph uses (see
// `insert_symbols_with_children`, whose batch rows each scan the File table).
// The CAST types the nested list, which a prepared statement binds as ANY.
MATCH (f:File {id: $file})
UNWIND $rows AS r
CREATE (f)-[:CONTAINS]->(s:Symbol {id: r.id, stable_id: r.stable_id, repo: r.repo, ref: r.ref,
        path: r.path, name: r.name, kind: r.kind, qualified_name: r.qualified_name,
        language: r.language, line_start: r.line_start, line_end: r.line_end,
        byte_start: r.byte_start, byte_end: r.byte_end, signature: r.signature,
        visibility: r.visibility, doc: r.doc})
WITH s, CAST(r.children AS STRUCT(id STRING, stable_id STRING, repo STRING, ref STRING,
        path STRING, name STRING, kind STRING, qualified_name STRING, language STRING,
        line_start INT64, line_end INT64, byte_start INT64, byte_end INT64,
        signature STRING, visibility STRING, doc STRING)[]) AS kids
UNWIND kids AS c
CREATE (s)-[:CONTAINS]->(:Symbol {id: c.id, stable_id: c.stable_id, repo: c.repo, ref: c.ref,
        path: c.path, name: c.name, kind: c.kind, qualified_name: c.qualified_name,
        language: c.language, line_start: c.line_start, line_end: c.line_end,
        byte_start: c.byte_start, byte_end: c.byte_end, signature: c.signature,
        visibility: c.visibility, doc: c.doc})
