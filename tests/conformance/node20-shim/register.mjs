// Node 20 shim for tools that need Node >= 22 only for fs.globSync.
// Use: NODE_OPTIONS="--import /abs/path/node20-shim/register.mjs"
// Registers a resolve hook that sends `import ... from "fs"` / "node:fs" to fs-shim.mjs,
// which re-exports node:fs and adds globSync (from the `glob` npm package).
// (A --require preload that assigns fs.globSync is not enough: the builtin's ESM
// export names are fixed before preloads run, so the named import still fails.)
import { register } from "node:module";
if (!("globSync" in (await import("node:fs")))) {
  register("./hooks.mjs", import.meta.url);
}
