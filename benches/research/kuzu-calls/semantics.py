"""Cycle semantics of Kuzu 0.11.3 recursive patterns on a tiny graph (in-memory)."""
import kuzu
db = kuzu.Database()  # in-memory
c = kuzu.Connection(db)
c.execute("CREATE NODE TABLE S(id STRING, PRIMARY KEY(id))")
c.execute("CREATE NODE TABLE F(id STRING, PRIMARY KEY(id))")
c.execute("CREATE REL TABLE CALLS(FROM S TO S, FROM F TO S, line INT64)")
for n in "XABCD":
    c.execute(f"CREATE (:S {{id:'{n}'}})")
c.execute("CREATE (:F {id:'file'})")
# X is the target. A->X, A->A (self recursion), B->A, A->B (mutual), C->B, X->C (cycle X->C->B->A->X), D->X twice (parallel), file->D
E = [("A","X",1),("A","A",2),("B","A",3),("A","B",4),("C","B",5),("X","C",6),("D","X",7),("D","X",8)]
for a,b,l in E:
    c.execute(f"MATCH (a:S {{id:'{a}'}}),(b:S {{id:'{b}'}}) CREATE (a)-[:CALLS {{line:{l}}}]->(b)")
c.execute("MATCH (a:F {id:'file'}),(b:S {id:'D'}) CREATE (a)-[:CALLS {line:9}]->(b)")
def show(q):
    r = c.execute(q); out=[]
    while r.has_next(): out.append(r.get_next())
    return out
print("edges: A->X, A->A, B->A, A->B, C->B, X->C, D->X (x2, lines 7,8), file->D")
for sem in ["", "TRAIL", "ACYCLIC", "SHORTEST", "ALL SHORTEST"]:
    for k in (3, 5):
        q = f"MATCH (c)-[e:CALLS* {sem} 1..{k}]->(x:S {{id:'X'}}) RETURN c.id AS cid, length(e) AS d, properties(rels(e),'line') AS lines ORDER BY d, cid"
        out = show(q)
        print(f"\n== {sem or 'default(WALK)'} 1..{k}: {len(out)} paths")
        if k == 3 or len(out) < 20:
            for o in out: print("  ", o)
        q2 = f"MATCH (c)-[e:CALLS* {sem} 1..{k}]->(x:S {{id:'X'}}) RETURN c.id, min(length(e)) ORDER BY c.id"
        print("   distinct callers/min depth:", show(q2))
print("\n== X reaches itself? (c = x)")
for sem in ["", "TRAIL", "ACYCLIC", "SHORTEST"]:
    print(sem or "WALK", show(f"MATCH (x:S {{id:'X'}})<-[e:CALLS* {sem} 1..5]-(x) RETURN length(e), properties(nodes(e),'id')"))
print("\n== start node returned by recursion with cycle, ACYCLIC excludes paths through start?")
print(show("MATCH (c)-[e:CALLS* ACYCLIC 1..5]->(x:S {id:'X'}) WHERE c.id='X' RETURN count(*)"))
print("is_trail/is_acyclic:", show("MATCH (c)-[e:CALLS*1..4]->(x:S {id:'X'}) RETURN is_trail(e), is_acyclic(e), count(*)"))
def safe(label, q):
    try: print(label, show(q))
    except Exception as e: print(label, "ERROR:", str(e)[:150])
safe("0-length lower bound:", ("MATCH (c)-[e:CALLS* SHORTEST 0..2]->(x:S {id:'X'}) RETURN c.id, length(e) ORDER BY c.id"))
safe("undirected SHORTEST:", ("MATCH (c)-[e:CALLS* SHORTEST 1..2]-(x:S {id:'X'}) RETURN c.id, length(e) ORDER BY c.id"))
