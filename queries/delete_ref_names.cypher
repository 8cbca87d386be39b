MATCH (n:Name) WHERE n.repo = $repo AND n.ref = $ref DETACH DELETE n
