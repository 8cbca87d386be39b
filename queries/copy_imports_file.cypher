// Ids and import names hold no newlines, so the CSV can be read in parallel.
COPY IMPORTS FROM '{csv}' (from='File', to='File', HEADER=false, AUTO_DETECT=false, DELIM=',', QUOTE='"', ESCAPE='"', NULL_STRINGS=['\\N'])
