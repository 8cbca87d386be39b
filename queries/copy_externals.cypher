COPY External FROM '{csv}' (HEADER=false, PARALLEL=false, NULL_STRINGS=['\\N'])
