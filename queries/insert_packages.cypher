UNWIND $rows AS r
CREATE (:Package {id: r.id, repo: r.repo, ref: r.ref, path: r.path, language: 'go'})
