COPY IMPORTS FROM '{csv}' (from='File', to='Package', HEADER=false, AUTO_DETECT=false, DELIM=',', QUOTE='"', ESCAPE='"', NULL_STRINGS=['\\N'])
