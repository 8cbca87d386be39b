COPY CONTAINS FROM '{csv}' (from='Symbol', to='Symbol', HEADER=false, PARALLEL=false, NULL_STRINGS=['\\N'])
