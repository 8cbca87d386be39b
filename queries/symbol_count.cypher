// How many symbols the graph holds (all refs): whether a lookup of symbols by
// id is better made row by row through the primary-key index.
MATCH (s:Symbol)
RETURN count(s)
