MERGE (r:Repo {name: $name}) SET r.root = $root
