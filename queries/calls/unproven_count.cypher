// How many sites that no tier proved name one of the given names (Name ids),
// of the given kinds (`call`, or reference kinds): a receiver of unknown type,
// an ambiguous name. Any of them could reach a symbol of that name, so an
// answer about one is a lower bound while this is not 0.
UNWIND $ids AS id
MATCH (n:Name {id: id})<-[u:UNRESOLVED]-()
WHERE list_contains($kinds, u.kind)
RETURN count(*)
