// When a repo/ref was last indexed: the tag its search index must carry.
MATCH (r:Ref {id: $id}) RETURN r.indexed_at
