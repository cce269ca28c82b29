// Bundles the extension with esbuild into dist/extension.js (vscode stays external).
import { build } from "esbuild";

await build({
  entryPoints: ["extension/src/extension.ts"],
  bundle: true,
  outfile: "dist/extension.js",
  platform: "node",
  format: "cjs",
  target: "node20",
  external: ["vscode"],
  sourcemap: true,
  minify: process.argv.includes("--minify"),
  logLevel: "warning",
});
