COPY CONTAINS FROM '{csv}' (from='Symbol', to='Symbol', HEADER=false, NULL_STRINGS=['\\N'])
