COPY Symbol FROM '{csv}' (HEADER=false, PARALLEL=false, NULL_STRINGS=['\\N'])
