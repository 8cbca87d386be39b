// A batch of call-graph edges of files that were re-resolved, each found from
// its source (by a hash join of the rows with the source's table, as in
// `insert_site_edges`) and told apart from the source's other edges by
// position. {REL}, {FROM}, {TO} and {ROW_COL} are filled in per relationship.
UNWIND $rows AS r
WITH r, r.from AS f
MATCH (a:{FROM}) WHERE a.id = f
MATCH (a)-[e:{REL}]->(b:{TO})
WHERE b.id = r.to AND e.line = r.line AND {ROW_COL}
DELETE e
