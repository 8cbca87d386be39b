// Node tables. Every node carries repo and ref so one data dir holds many of both.
CREATE NODE TABLE IF NOT EXISTS Repo(name STRING, root STRING, PRIMARY KEY (name));
CREATE NODE TABLE IF NOT EXISTS Ref(id STRING, repo STRING, name STRING, commit STRING, indexed_at STRING, layout_hash STRING, PRIMARY KEY (id));
CREATE NODE TABLE IF NOT EXISTS File(id STRING, repo STRING, ref STRING, path STRING, language STRING, module STRING, package STRING, content_hash INT64, line_count INT64, size INT64, error_lines INT64, recovered INT64, PRIMARY KEY (id));
CREATE NODE TABLE IF NOT EXISTS Symbol(id STRING, stable_id STRING, repo STRING, ref STRING, path STRING, name STRING, kind STRING, qualified_name STRING, language STRING, line_start INT64, line_end INT64, byte_start INT64, byte_end INT64, signature STRING, visibility STRING, doc STRING, PRIMARY KEY (id));
// A Go package: the importable (non-test) .go files of one directory. A Go import
// is one IMPORTS edge to it, not one per file of the package.
CREATE NODE TABLE IF NOT EXISTS Package(id STRING, repo STRING, ref STRING, path STRING, language STRING, PRIMARY KEY (id));
CREATE NODE TABLE IF NOT EXISTS External(id STRING, repo STRING, ref STRING, name STRING, PRIMARY KEY (id));
