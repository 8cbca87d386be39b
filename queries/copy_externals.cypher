COPY External FROM '{csv}' (HEADER=false, NULL_STRINGS=['\\N'])
