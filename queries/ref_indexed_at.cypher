// When a repo/ref was last indexed (the tag its search index and resolution state
// must carry) and at which commit.
MATCH (r:Ref {id: $id}) RETURN r.indexed_at, r.commit
