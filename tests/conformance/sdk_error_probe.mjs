// TS SDK 1.x Client: call a tool that fails (isError) and see what the caller gets.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
const url = process.argv[2] ?? "http://127.0.0.1:7455/mcp";
const c = new Client({ name: "sdk-error-probe", version: "0" });
await c.connect(new StreamableHTTPClientTransport(new URL(url)));
await c.listTools(); // caches output schemas -> validation on callTool
for (const [name, args] of [["get_node", { node_id: "nope" }], ["run_cypher", { query: "CREATE (n:X) RETURN n" }], ["search_code", { query: "main" }]]) {
  try {
    const r = await c.callTool({ name, arguments: args });
    console.log(`${name}: ok isError=${r.isError} ${JSON.stringify(r.structuredContent).slice(0, 120)}`);
  } catch (e) { console.log(`${name}: THROWS ${e.message.slice(0, 300)}`); }
}
await c.close();
