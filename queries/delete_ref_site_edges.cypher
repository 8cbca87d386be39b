// Every call-graph edge out of a ref's symbols and files (a rewrite of all of
// them: a run without a trusted state). {REL} and {FROM} are filled in.
MATCH (a:{FROM})-[e:{REL}]->()
WHERE a.repo = $repo AND a.ref = $ref
DELETE e
