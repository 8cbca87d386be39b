// The hash of the manifests (Cargo.toml, go.mod, …) the ref was indexed with.
MATCH (r:Ref {id: $id}) RETURN r.layout_hash
