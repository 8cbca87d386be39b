// Files of a repo/ref whose parse left lines in error or was read again past a
// misparse (`extract::recover`), by path: the index report lists them every run.
MATCH (f:File) WHERE f.repo = $repo AND f.ref = $ref AND (f.error_lines > 0 OR f.recovered > 0)
RETURN f.path, f.error_lines, f.recovered
ORDER BY f.path
