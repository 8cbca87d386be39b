UNWIND $ids AS xid
MATCH (x:External {id: xid})
DETACH DELETE x
