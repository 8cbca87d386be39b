// Where a repository's working tree is (the CLI reads source lines there).
MATCH (r:Repo {name: $repo})
RETURN r.root
