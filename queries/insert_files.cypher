UNWIND $rows AS r
MATCH (x:Ref) WHERE x.id = $ref_id
CREATE (x)-[:HAS_FILE]->(:File {id: r.id, repo: r.repo, ref: r.ref, path: r.path,
        language: r.language, module: r.module, package: r.package,
        content_hash: r.content_hash, line_count: r.line_count, size: r.size,
        error_lines: r.error_lines, recovered: r.recovered})
