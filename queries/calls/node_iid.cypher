// A symbol's internal id (what the walks give the targets of call sites by).
MATCH (x:Symbol {id: $id})
RETURN id(x)
