// Bulk load of a fresh database; {csv} is a scratch file cruxe writes itself.
COPY File FROM '{csv}' (HEADER=false, PARALLEL=false, NULL_STRINGS=['\\N'])
