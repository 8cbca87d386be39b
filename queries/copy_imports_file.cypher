COPY IMPORTS FROM '{csv}' (from='File', to='File', HEADER=false, PARALLEL=false, NULL_STRINGS=['\\N'])
