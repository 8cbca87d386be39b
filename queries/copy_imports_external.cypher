COPY IMPORTS FROM '{csv}' (from='File', to='External', HEADER=false, PARALLEL=false, NULL_STRINGS=['\\N'])
