COPY CONTAINS FROM '{csv}' (from='File', to='Symbol', HEADER=false, AUTO_DETECT=false, DELIM=',', QUOTE='"', ESCAPE='"', NULL_STRINGS=['\\N'])
