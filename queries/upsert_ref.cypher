MATCH (p:Repo {name: $repo})
MERGE (r:Ref {id: $id})
SET r.repo = $repo, r.name = $name, r.commit = $commit, r.indexed_at = $indexed_at,
    r.layout_hash = $layout_hash
MERGE (p)-[:HAS_REF]->(r)
