// One nested symbol under its parent symbol, found by primary key (see
// `insert_symbols_under_symbol` for the batched form a small graph uses).
MATCH (p:Symbol {id: $parent})
CREATE (p)-[:CONTAINS]->(:Symbol {id: $id, stable_id: $stable_id, repo: $repo, ref: $ref,
        path: $path, name: $name, kind: $kind, qualified_name: $qualified_name,
        language: $language, line_start: $line_start, line_end: $line_end,
        byte_start: $byte_start, byte_end: $byte_end, signature: $signature,
        visibility: $visibility, doc: $doc})
