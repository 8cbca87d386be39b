// One call-graph edge, both ends found by key: in a big graph Kuzu 0.11 plans
// the batch form as a scan of the table per row (see `write::Keyed`).
MATCH (a:{FROM} {id: $from})
MATCH (b:{TO} {id: $to})
CREATE (a)-[:{REL} {PROPS}]->(b)
