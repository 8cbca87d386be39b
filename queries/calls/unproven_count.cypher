// How many sites that no tier proved name a name (a Name id; one statement
// a name: a key lookup, where a list of ids scanned every Name),
// of the given kinds (`call`, or reference kinds): a receiver of unknown type,
// an ambiguous name. Any of them could reach a symbol of that name, so an
// answer about one is a lower bound while this is not 0.
MATCH (n:Name {id: $id})<-[u:UNRESOLVED]-()
WHERE list_contains($kinds, u.kind)
RETURN count(*)
