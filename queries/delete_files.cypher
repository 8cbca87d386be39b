UNWIND $ids AS fid
MATCH (f:File {id: fid})
DETACH DELETE f
