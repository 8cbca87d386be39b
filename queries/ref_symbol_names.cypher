// What the server's catalog keeps of each symbol of a repo/ref whose path is in
// [$from, $to) ($to = '' for no end): every property (of the doc only its first
// line, cut in Rust), with the byte range. Parents come from
// `ref_symbol_parents`: an `OPTIONAL MATCH` of the parent here joined every
// statement with the whole CONTAINS table (see store/catalog.rs, `load`).
MATCH (s:Symbol)
WHERE s.repo = $repo AND s.ref = $ref AND s.path >= $from AND ($to = '' OR s.path < $to)
RETURN s.id, s.stable_id, s.name, s.kind, s.qualified_name, s.path, s.language,
       s.line_start, s.line_end, s.signature, s.visibility, s.doc,
       s.byte_start, s.byte_end
