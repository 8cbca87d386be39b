COPY HAS_FILE FROM '{csv}' (HEADER=false, PARALLEL=false)
