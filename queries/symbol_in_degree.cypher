// How many import edges point at one symbol, found by primary key and walked
// back from (see `symbols_in_degree` for the batched form a small graph uses).
// No row when none does: an OPTIONAL MATCH is planned as a scan of every File
// (~10 ms a symbol on the Rust crates, against ~2 ms this way).
MATCH (s:Symbol {id: $id})<-[i:IMPORTS]-(:File)
RETURN s.id, count(i) AS edges
