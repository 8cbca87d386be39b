// The sites that name a symbol but that no tier could prove (ambiguous, or a
// receiver of unknown type), per kind (`call`, or a reference kind): what makes
// an answer a lower bound.
MATCH (n:Name {id: $id})<-[u:UNRESOLVED]-()
RETURN u.kind, count(*)
