// Bulk load of a fresh database; {csv} is a scratch file cruxe writes itself. The
// dialect is given (AUTO_DETECT=false): sniffing parses the file once per candidate.
COPY File FROM '{csv}' (HEADER=false, AUTO_DETECT=false, DELIM=',', QUOTE='"', ESCAPE='"', PARALLEL=false, NULL_STRINGS=['\\N'])
