// Every outgoing import edge of the given files (before they are re-inserted).
UNWIND $ids AS fid
MATCH (f:File {id: fid})-[e:IMPORTS]->()
DELETE e
