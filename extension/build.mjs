// Bundles the extension with esbuild into dist/extension.js (vscode stays external), and the
// Chat view's webview script into media/chat/chat.js (browser iife, markdown-it and DOMPurify
// bundled in: the webview loads nothing from the network).
import { build } from "esbuild";

const minify = process.argv.includes("--minify");

await build({
  entryPoints: ["extension/src/extension.ts"],
  bundle: true,
  outfile: "dist/extension.js",
  platform: "node",
  format: "cjs",
  target: "node20",
  external: ["vscode"],
  sourcemap: true,
  minify,
  logLevel: "warning",
});

await build({
  entryPoints: ["extension/webview/chat.ts"],
  bundle: true,
  outfile: "media/chat/chat.js",
  platform: "browser",
  format: "iife",
  target: ["chrome120"],
  sourcemap: false,
  minify,
  legalComments: "eof",
  logLevel: "warning",
});
