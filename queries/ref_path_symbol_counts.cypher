// How many symbols each path of a repo/ref holds: the catalog's load sizes its
// statements by them (store/catalog.rs, `load`).
MATCH (s:Symbol)
WHERE s.repo = $repo AND s.ref = $ref
RETURN s.path, count(*)
