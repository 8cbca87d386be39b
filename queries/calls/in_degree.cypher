// How many calls, references, implementations and extensions point at a
// symbol, every tier: an impact walk starts only where something does (a
// single hop costs a tenth of a walk).
MATCH (c)-[e:CALLS|REFERENCES|IMPLEMENTS|EXTENDS]->(x:Symbol {id: $id})
RETURN count(*)
