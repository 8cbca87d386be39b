// One call-graph edge of a file that was re-resolved, found from its source
// by key and told apart from the source's other edges by position.
MATCH (a:{FROM} {id: $from})-[e:{REL}]->(b:{TO} {id: $to})
WHERE e.line = $line AND {COL}
DELETE e
