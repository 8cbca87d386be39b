"""Drives a cruxe MCP server through the official MCP Python SDK (`pip install mcp`).

The Rust tests run this so that every tool call crosses a real client we did not
write. It reads a JSON script on stdin:

    {"transport": "http", "url": "http://127.0.0.1:PORT/mcp"}
    {"transport": "stdio", "command": "/path/cruxe", "args": ["mcp", "PATH", ...]}
    plus "calls": [[tool_name, {arguments}], ...] and, optionally, "wait_ready": true
    (poll index_status until every repo is indexed before the calls). A call may
    carry a third element {"until": "ok" | "error", "timeout_s": 30}: it is then
    repeated until its result is (not) an error, and its result says after how many
    milliseconds ("waited_ms").

With "clients": N (HTTP only) the script runs N sessions at once, each making
"rounds" passes over "calls"; the report then has "results" of every call of
every session, in no particular order, and "clients" = N.

and prints one JSON object on stdout:

    {"protocol_version", "server_name", "tools": [{"name", "input_schema", "output_schema",
    "title", "description", "annotations"}],
     "results": [{"is_error", "structured", "text", "schema_errors"}]}

"schema_errors" lists what in a result's structuredContent breaks its tool's
outputSchema (JSON Schema 2020-12), errors included: a client may check both.

Any failure of the client or the protocol is an exception and a non-zero exit.
"""

import asyncio
import json
import sys
import time

import jsonschema

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client


async def drive(streams, script):
    read, write = streams[0], streams[1]
    async with ClientSession(read, write) as session:
        init = await session.initialize()
        listed = await session.list_tools()
        if script.get("wait_ready"):
            for _ in range(600):
                status = await session.call_tool("index_status", {})
                repos = status.structured_content["repos"]
                if all(r["indexing_status"] == "ready" for r in repos):
                    break
                await asyncio.sleep(0.1)
            else:
                raise RuntimeError("the server never finished indexing")
        schemas = {t.name: t.output_schema for t in listed.tools}
        results = []
        for _ in range(script.get("rounds", 1)):
            for call in script.get("calls", []):
                out = await one_call(session, call)
                schema = schemas.get(call[0])
                if schema and out["structured"] is not None:
                    validator = jsonschema.Draft202012Validator(schema)
                    out["schema_errors"] = [e.message for e in validator.iter_errors(out["structured"])]
                results.append(out)
        return {
            "protocol_version": str(init.protocol_version),
            "server_name": init.server_info.name,
            "tools": [
                {"name": t.name, "input_schema": t.input_schema, "output_schema": t.output_schema,
                 "title": t.title, "description": t.description,
                 "annotations": t.annotations.model_dump(by_alias=True, exclude_none=True)
                 if t.annotations else None}
                for t in listed.tools
            ],
            "results": results,
        }


async def one_call(session, call):
    name, args = call[0], call[1]
    poll = call[2] if len(call) > 2 else None
    started = time.monotonic()
    while True:
        res = await session.call_tool(name, args)
        if poll is None or bool(res.is_error) == (poll["until"] == "error"):
            break
        if time.monotonic() - started > poll.get("timeout_s", 30):
            raise RuntimeError(f"{name} {args}: never reached {poll['until']}")
        await asyncio.sleep(0.005)
    text = res.content[0].text if res.content else None
    out = {
        "is_error": bool(res.is_error),
        "structured": res.structured_content,
        "text": text,
    }
    if poll is not None:
        out["waited_ms"] = round((time.monotonic() - started) * 1000, 1)
    return out


async def one_client(script):
    async with streamable_http_client(script["url"]) as streams:
        return await drive(streams, script)


async def main():
    script = json.load(sys.stdin)
    if script.get("clients"):
        outs = await asyncio.gather(
            *[one_client(script) for _ in range(script["clients"])]
        )
        out = dict(outs[0])
        out["results"] = [r for o in outs for r in o["results"]]
        out["clients"] = len(outs)
    elif script["transport"] == "http":
        async with streamable_http_client(script["url"]) as streams:
            out = await drive(streams, script)
    else:
        params = StdioServerParameters(
            command=script["command"], args=script.get("args", [])
        )
        async with stdio_client(params) as streams:
            out = await drive(streams, script)
    json.dump(out, sys.stdout)


asyncio.run(main())
