import fs from "node:fs";
import { createRequire } from "node:module";
export * from "node:fs";
export default fs;
// `glob` is installed where run.sh runs the tools (its WORK dir, the cwd).
const require = createRequire(`${process.cwd()}/package.json`);
const glob = require("glob");
// fs.globSync(pattern, { cwd, exclude, withFileTypes }) -> glob.globSync(pattern, { cwd, ignore, withFileTypes })
export function globSync(pattern, opts = {}) {
  const o = {};
  if (opts.cwd !== undefined) o.cwd = String(opts.cwd);
  if (Array.isArray(opts.exclude)) o.ignore = opts.exclude;
  if (opts.withFileTypes) o.withFileTypes = true;
  return glob.globSync(pattern, o);
}
