"""Drives a cruxe MCP server through the official MCP Python SDK (`pip install mcp`).

The Rust tests run this so that every tool call crosses a real client we did not
write. It reads a JSON script on stdin:

    {"transport": "http", "url": "http://127.0.0.1:PORT/mcp"}
    {"transport": "stdio", "command": "/path/cruxe", "args": ["mcp", "PATH", ...]}
    plus "calls": [[tool_name, {arguments}], ...] and, optionally, "wait_ready": true
    (poll index_status until every repo is indexed before the calls)

and prints one JSON object on stdout:

    {"protocol_version", "server_name", "tools": [{"name", "input_schema"}],
     "results": [{"is_error", "structured", "text"}]}

Any failure of the client or the protocol is an exception and a non-zero exit.
"""

import asyncio
import json
import sys

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
        results = []
        for name, args in script.get("calls", []):
            res = await session.call_tool(name, args)
            text = res.content[0].text if res.content else None
            results.append(
                {
                    "is_error": bool(res.is_error),
                    "structured": res.structured_content,
                    "text": text,
                }
            )
        return {
            "protocol_version": str(init.protocol_version),
            "server_name": init.server_info.name,
            "tools": [
                {"name": t.name, "input_schema": t.input_schema} for t in listed.tools
            ],
            "results": results,
        }


async def main():
    script = json.load(sys.stdin)
    if script["transport"] == "http":
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
