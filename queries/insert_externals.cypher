UNWIND $rows AS r
CREATE (:External {id: r.id, repo: r.repo, ref: r.ref, name: r.name})
