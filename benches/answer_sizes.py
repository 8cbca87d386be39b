"""What answers cost: bytes (and tokens) of the text of chosen tool calls, for each
binary given, on one corpus.

    python3 benches/answer_sizes.py CORPUS 'CALLS_JSON' CRUXE_BIN...

CALLS_JSON is a list of [tool, arguments]. Each binary indexes CORPUS into a
temporary data dir, serves it, and the calls go through the MCP Python SDK
(tests/mcp_client.py). With CRUXE_TOKEN_COUNTER=program (reads a JSON array of
texts on stdin, prints a JSON array of their token counts; docs/BENCHMARKS.md used
a ten-line tiktoken-rs o200k_base program) the tokens are counted too.
"""
import json, os, shutil, subprocess, sys, tempfile, time, urllib.request
PY = os.path.expanduser("~/.cache/cruxe-venv/bin/python")
CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "mcp_client.py")
COUNTER = os.environ.get("CRUXE_TOKEN_COUNTER")
CORPUS = sys.argv[1]
CALLS = json.loads(sys.argv[2])
for binary in sys.argv[3:]:
    data = tempfile.mkdtemp()
    subprocess.run([binary, "index", CORPUS, "--data", data, "--repo", "r", "--ref", "r"], check=True, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    srv = subprocess.Popen([binary, "serve", CORPUS, "--data", data, "--repo", "r", "--ref", "r", "--listen", "127.0.0.1:7499", "--no-watch"], stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                if json.load(urllib.request.urlopen("http://127.0.0.1:7499/health")).get("indexing_status") == "ready": break
            except Exception: pass
            time.sleep(0.2)
        script = {"transport": "http", "url": "http://127.0.0.1:7499/mcp", "calls": CALLS}
        out = subprocess.run([PY, CLIENT], input=json.dumps(script), capture_output=True, text=True, check=True)
        texts = [r.get("text", "") for r in json.loads(out.stdout)["results"]]
        counts = (json.loads(subprocess.run([COUNTER], input=json.dumps(texts), capture_output=True,
                                            text=True, check=True).stdout)
                  if COUNTER else ["-"] * len(texts))
        print(f"== {binary}")
        for call, t, n in zip(CALLS, texts, counts):
            print(f"{json.dumps(call)[:110]:112} {len(t):>8} B {n:>7} tok")
    finally:
        srv.terminate(); srv.wait()
        shutil.rmtree(data, ignore_errors=True)
