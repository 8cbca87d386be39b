// Every symbol of one file (its id), found from the File through CONTAINS: the
// file by its primary key, then a walk down its tree. With a list of files
// (`delete_file_symbols`) Kuzu walks down from every file before it filters
// (79 ms for one file of Go's tree, 16-26 ms this way); for more than a few
// files the list is cheaper. 30 levels is the catalog's nesting bound
// (catalog::MAX_DEPTH).
MATCH (f:File {id: $id})-[:CONTAINS*1..30]->(s:Symbol)
DETACH DELETE s
