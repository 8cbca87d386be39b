COPY CONTAINS FROM '{csv}' (from='File', to='Symbol', HEADER=false, PARALLEL=false, NULL_STRINGS=['\\N'])
