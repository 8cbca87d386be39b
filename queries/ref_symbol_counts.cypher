MATCH (s:Symbol) RETURN s.repo, s.ref, count(*) AS symbols
