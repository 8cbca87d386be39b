COPY IMPORTS FROM '{csv}' (from='File', to='External', HEADER=false, NULL_STRINGS=['\\N'])
