// The call graph (CONTRACT section 2): one edge per site. `line`/`col` are the
// 1-based position of the callee's (or referenced) name token; `confidence`
// names the resolution tier that proved the target (scope, import, self,
// qualified, typed, dispatch, name).
CREATE REL TABLE IF NOT EXISTS CALLS(FROM Symbol TO Symbol, FROM File TO Symbol, line INT64, col INT64, confidence STRING, to_name STRING);
// A reference keeps no `to_name`: what it names is the target's name, `kind` says
// how it is used.
CREATE REL TABLE IF NOT EXISTS REFERENCES(FROM Symbol TO Symbol, FROM File TO Symbol, line INT64, col INT64, kind STRING, confidence STRING);
// Type relations, written by the file holding the `impl`, the class header or
// the embedding; `line` is that site's.
CREATE REL TABLE IF NOT EXISTS IMPLEMENTS(FROM Symbol TO Symbol, line INT64, confidence STRING);
CREATE REL TABLE IF NOT EXISTS EXTENDS(FROM Symbol TO Symbol, line INT64, confidence STRING);
// A site no tier could prove while the repo defines its name: kept with its text
// so answers count it (`find_references.unresolved`, `completeness: lower_bound`)
// instead of guessing. One Name node per such name and ref.
CREATE NODE TABLE IF NOT EXISTS Name(id STRING, repo STRING, ref STRING, name STRING, PRIMARY KEY (id));
CREATE REL TABLE IF NOT EXISTS UNRESOLVED(FROM Symbol TO Name, FROM File TO Name, line INT64, col INT64, kind STRING, to_name STRING);
