COPY IMPORTS FROM '{csv}' (from='File', to='Symbol', HEADER=false, NULL_STRINGS=['\\N'])
