// A batch of call-graph edges of one relationship and end labels; {REL},
// {FROM}, {TO} and {PROPS} are filled in per relationship (store::graph::sites).
// Each end is found by a hash join of the rows with its table: Kuzu 0.11 plans
// one when the key is a variable (`f`, `t`), and a scan of the whole table per
// row when it is a field of the row (`r.from`). So the cost is a scan of each
// end's table, whatever the rows (1,400 edges into 648k symbols: ~150 ms).
UNWIND $rows AS r
WITH r, r.from AS f
MATCH (a:{FROM}) WHERE a.id = f
WITH a, r, r.to AS t
MATCH (b:{TO}) WHERE b.id = t
CREATE (a)-[:{REL} {PROPS}]->(b)
