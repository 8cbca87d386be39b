MATCH (p:Repo {name: $repo})
MERGE (r:Ref {id: $id})
SET r.repo = $repo, r.name = $name, r.commit = $commit, r.indexed_at = $indexed_at
MERGE (p)-[:HAS_REF]->(r)
