// A batch of call-graph edges of one relationship and end labels; {REL},
// {FROM}, {TO} and {PROPS} are filled in per relationship (store::graph::sites).
UNWIND $rows AS r
MATCH (a:{FROM} {id: r.from})
MATCH (b:{TO} {id: r.to})
CREATE (a)-[:{REL} {PROPS}]->(b)
