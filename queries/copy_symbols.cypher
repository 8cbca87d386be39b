COPY Symbol FROM '{csv}' (HEADER=false, PARALLEL=false)
