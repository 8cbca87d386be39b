COPY External FROM '{csv}' (HEADER=false, PARALLEL=false)
