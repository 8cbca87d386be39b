// Bulk load of a fresh database; {csv} is a scratch file cruxe writes itself.
COPY File FROM '{csv}' (HEADER=false, AUTO_DETECT=false, DELIM=',', QUOTE='"', ESCAPE='"', PARALLEL=false, NULL_STRINGS=['\\N'])
