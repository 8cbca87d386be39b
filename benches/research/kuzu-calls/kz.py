"""Shared helpers: read-only connection, timing, percentiles."""
import json, os, statistics, time
import kuzu

HERE = os.path.dirname(os.path.abspath(__file__))
DB = os.path.join(HERE, "db", "graph.kuzu")
T = json.load(open(os.path.join(HERE, "data", "targets.json")))


def open_ro(threads=None, bp=None):
    kw = {"read_only": True}
    if threads:
        kw["max_num_threads"] = threads
    if bp:
        kw["buffer_pool_size"] = bp
    db = kuzu.Database(DB, **kw)
    return db, kuzu.Connection(db)


def rows(conn, q, params=None):
    r = conn.execute(q, params or {})
    out = []
    while r.has_next():
        out.append(r.get_next())
    return out


def timed(conn, q, params=None):
    t = time.perf_counter()
    out = rows(conn, q, params)
    return (time.perf_counter() - t) * 1000, out


def pct(xs):
    xs = sorted(xs)
    if not xs:
        return {}
    f = lambda p: xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]
    return {"p50": round(f(.5), 2), "p95": round(f(.95), 2), "max": round(xs[-1], 2), "n": len(xs)}


def rss_mb():
    with open("/proc/self/status") as fh:
        for l in fh:
            if l.startswith("VmRSS"):
                return int(l.split()[1]) // 1024
    return -1


def hwm_mb():
    with open("/proc/self/status") as fh:
        for l in fh:
            if l.startswith("VmHWM"):
                return int(l.split()[1]) // 1024
    return -1
