COPY CONTAINS FROM '{csv}' (from='Symbol', to='Symbol', HEADER=false, AUTO_DETECT=false, DELIM=',', QUOTE='"', ESCAPE='"', NULL_STRINGS=['\\N'])
