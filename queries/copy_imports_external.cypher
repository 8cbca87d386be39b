COPY IMPORTS FROM '{csv}' (from='File', to='External', HEADER=false, AUTO_DETECT=false, DELIM=',', QUOTE='"', ESCAPE='"', NULL_STRINGS=['\\N'])
