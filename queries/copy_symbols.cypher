COPY Symbol FROM '{csv}' (HEADER=false, AUTO_DETECT=false, DELIM=',', QUOTE='"', ESCAPE='"', PARALLEL=false, NULL_STRINGS=['\\N'])
