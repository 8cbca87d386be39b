// The symbols the given files (ids) import: whose import in-degree changes when
// these files' edges are rewritten or the files go.
UNWIND $ids AS fid
MATCH (f:File {id: fid})-[:IMPORTS]->(s:Symbol)
RETURN DISTINCT s.id
