"""Create the schema (project's node tables + planned CALLS) and bulk-load the CSVs."""
import os, shutil, sys, time
import kuzu

HERE = os.path.dirname(os.path.abspath(__file__))
DB = os.path.join(HERE, "db", "graph.kuzu")
D = os.path.join(HERE, "data")
if os.path.exists(os.path.dirname(DB)):
    shutil.rmtree(os.path.dirname(DB))
os.makedirs(os.path.dirname(DB))
db = kuzu.Database(DB)
c = kuzu.Connection(db)
OPT = "HEADER=false, AUTO_DETECT=false, DELIM=',', QUOTE='\"', ESCAPE='\"', NULL_STRINGS=['\\\\N']"
stmts = [
    "CREATE NODE TABLE File(id STRING, repo STRING, ref STRING, path STRING, language STRING, module STRING, package STRING, content_hash INT64, line_count INT64, size INT64, imports STRING, PRIMARY KEY (id))",
    "CREATE NODE TABLE Symbol(id STRING, stable_id STRING, repo STRING, ref STRING, path STRING, name STRING, kind STRING, qualified_name STRING, language STRING, line_start INT64, line_end INT64, byte_start INT64, byte_end INT64, signature STRING, visibility STRING, doc STRING, PRIMARY KEY (id))",
    "CREATE REL TABLE CONTAINS(FROM File TO Symbol, FROM Symbol TO Symbol)",
    "CREATE REL TABLE CALLS(FROM Symbol TO Symbol, FROM File TO Symbol, line INT64, col INT64, confidence STRING, to_name STRING)",
    f"COPY File FROM '{D}/files.csv' ({OPT}, PARALLEL=false)",
    f"COPY Symbol FROM '{D}/symbols.csv' ({OPT}, PARALLEL=false)",
    f"COPY CONTAINS FROM '{D}/contains_fs.csv' (from='File', to='Symbol', {OPT})",
    f"COPY CONTAINS FROM '{D}/contains_ss.csv' (from='Symbol', to='Symbol', {OPT})",
    f"COPY CALLS FROM '{D}/calls_ss.csv' (from='Symbol', to='Symbol', {OPT})",
    f"COPY CALLS FROM '{D}/calls_fs.csv' (from='File', to='Symbol', {OPT})",
]
t0 = time.time()
for s in stmts:
    t = time.time()
    r = c.execute(s)
    msg = r.get_next()[0] if r.has_next() else ""
    print(f"{time.time()-t:7.2f}s  {s[:70]}  {msg}", flush=True)
c.execute("CHECKPOINT")
print(f"total {time.time()-t0:.1f}s")
for q in ["MATCH (s:Symbol) RETURN count(*)", "MATCH ()-[e:CALLS]->() RETURN count(*)",
          "MATCH (:Symbol)-[e:CALLS]->(:Symbol) RETURN count(*)", "MATCH (:File)-[e:CALLS]->(:Symbol) RETURN count(*)"]:
    print(q, c.execute(q).get_next())
del c, db
os.system(f"du -sh {os.path.dirname(DB)}; ls -la {os.path.dirname(DB)}")
