// One CommonJS file for the extension host: dist/extension.js (vscode stays external).
import { build } from "esbuild";

const production = process.argv.includes("--production");
await build({
  entryPoints: ["src/extension.ts"],
  bundle: true,
  outfile: "dist/extension.js",
  format: "cjs",
  platform: "node",
  target: "node20",
  external: ["vscode"],
  sourcemap: !production,
  minify: production,
  logLevel: "warning",
});
console.log(`built dist/extension.js${production ? " (production)" : ""}`);
