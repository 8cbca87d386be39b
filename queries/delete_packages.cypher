// Packages whose last file went (their import edges go with them).
UNWIND $ids AS pid
MATCH (p:Package {id: pid})
DETACH DELETE p
