COPY {REL} FROM '{csv}' (from='{FROM}', to='{TO}', HEADER=false, AUTO_DETECT=false, DELIM=',', QUOTE='"', ESCAPE='"', NULL_STRINGS=['\\N'])
