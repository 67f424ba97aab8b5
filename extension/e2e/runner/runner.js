// Runs inside the real VS Code extension host (code-server) beside the memls extension. It
// drives the extension through VS Code's API and writes what it saw to $MEMLS_E2E_OUT; the
// driver (e2e/driver.mjs) asserts on it and takes the screenshot.
const vscode = require("vscode");
const fs = require("fs");
const path = require("path");

const OUT = process.env.MEMLS_E2E_OUT;
const STORED = "Releases are cut from the main branch every Friday";
const steps = [];
const report = { ok: false, steps, checks: {} };

function write(extra = {}) {
  if (OUT) fs.writeFileSync(OUT + ".tmp", JSON.stringify({ ...report, ...extra }, null, 1));
  if (OUT) fs.renameSync(OUT + ".tmp", OUT);
}

function step(name) {
  steps.push({ name, at: new Date().toISOString() });
  write();
}

function until(event, test, ms, what) {
  return new Promise((resolve, reject) => {
    let sub;
    const timer = setTimeout(() => { sub && sub.dispose(); reject(new Error(`timed out after ${ms} ms waiting for ${what}`)); }, ms);
    const check = () => {
      let value;
      try { value = test(); } catch (e) { value = undefined; }
      if (value) { clearTimeout(timer); sub && sub.dispose(); resolve(value); return true; }
      return false;
    };
    if (check()) return;
    sub = event(() => check());
  });
}

function within(promise, ms, what) {
  return Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms))]);
}

/** The next firing of `event`, or undefined after `ms`. */
function nextEvent(event, ms) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => { sub.dispose(); resolve(undefined); }, ms);
    const sub = event((e) => { clearTimeout(timer); sub.dispose(); resolve(e === undefined ? true : e); });
  });
}

function memlsDiagnostics(uri) {
  return vscode.languages.getDiagnostics(uri).filter((d) => d.source === "memls");
}

async function run() {
  if (!OUT) return;
  const folder = vscode.workspace.workspaceFolders[0];
  const agents = vscode.Uri.joinPath(folder.uri, "AGENTS.md");
  const claude = vscode.Uri.joinPath(folder.uri, "CLAUDE.md");
  step("runner started");

  const ext = vscode.extensions.getExtension("memls.memls");
  report.checks.installed = !!ext;
  const api = await ext.activate();
  report.checks.activated = ext.isActive;
  report.checks.serverStarted = await api.started;
  report.checks.launch = api.client.launch && { command: api.client.launch.command, how: api.client.launch.how };
  step("extension activated");

  // AGENTS.md's own contradiction on both its lines, and CLAUDE.md's with AGENTS.md
  const both = await until(vscode.languages.onDidChangeDiagnostics, () => {
    const a = memlsDiagnostics(agents), c = memlsDiagnostics(claude);
    const lines = new Set(a.map((d) => d.range.start.line));
    return lines.has(3) && lines.has(5) && c.length ? { a, c } : undefined;
  }, 150000, "memls diagnostics on both lines of AGENTS.md and on CLAUDE.md");
  const flat = (ds) => ds.map((d) => ({ line: d.range.start.line, severity: d.severity, message: d.message, code: d.code }));
  report.checks.diagnostics = { agents: flat(both.a), claude: flat(both.c) };
  // code actions from the server on one of them
  await vscode.window.showTextDocument(agents);
  const r = both.a[0].range;
  let actions = [];
  // opening the note re-syncs it (the open buffer wins): ask until the server's actions come
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      actions = await vscode.commands.executeCommand("vscode.executeCodeActionProvider", agents,
        new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character));
    } catch (err) {
      report.checks.codeActionsError = String(err);
    }
    if ((actions || []).some((a) => a.title === "Supersede the older statement")) break;
    await new Promise((res) => setTimeout(res, 500));
  }
  report.checks.codeActions = (actions || []).map((a) => a.title);
  step("diagnostics");

  // Remember Selection: a line of a plain file, stored as a decision with its source range
  const plan = vscode.Uri.joinPath(folder.uri, "plan.txt");
  const editor = await vscode.window.showTextDocument(plan);
  const line = editor.document.lineAt(1);
  editor.selection = new vscode.Selection(line.range.start, line.range.end);
  const stored = await vscode.commands.executeCommand("memls.rememberSelection", { type: "decision" });
  report.checks.stored = stored && { id: stored.id, created: stored.created, type: stored.memory.type,
    sourceUri: stored.memory.sourceUri, sourceRange: stored.memory.sourceRange, project: stored.project };
  step("remembered");

  // Search Memory finds it (live QuickPick, interactive depth)
  const found = await vscode.commands.executeCommand("memls.searchMemory", { query: "when are releases cut" });
  report.checks.search = found && { ids: found.results.map((r) => r.id), first: found.results[0] && found.results[0].content };
  await vscode.commands.executeCommand("workbench.action.closeQuickOpen");
  step("searched");

  // flag it (two "outdated" signals), see it in the review tree, approve it: the queue empties
  for (let i = 0; i < 2; i++) {
    await api.request("memory/feedback", { project: stored.project, id: stored.id, signal: "outdated", query: "when are releases cut" });
  }
  const groups = await api.review.getChildren();
  const flaggedGroup = groups.find((g) => g.kind === "group" && g.state === "flagged");
  const flaggedNodes = flaggedGroup ? await api.review.getChildren(flaggedGroup) : [];
  report.checks.reviewBefore = flaggedNodes.map((n) => n.memory && n.memory.id);
  report.checks.reviewLabelBefore = flaggedGroup && api.review.getTreeItem(flaggedGroup).label;
  const node = flaggedNodes.find((n) => n.memory && n.memory.id === stored.id);
  if (node) await vscode.commands.executeCommand("memls.review.approve", node);
  const after = await api.review.getChildren();
  const flaggedAfter = after.find((g) => g.kind === "group" && g.state === "flagged");
  report.checks.reviewAfter = flaggedAfter ? flaggedAfter.memories.map((m) => m.id) : null;
  step("reviewed");

  // citations: a memory citing ops.py's deploy(); the cited line edited on disk (not in the
  // editor): the daemon's watcher re-checks it, the CodeLens and the Review group show it
  const ops = vscode.Uri.joinPath(folder.uri, "ops.py");
  const cited = await api.request("memory/store", { uri: folder.uri.toString(), type: "fact",
    text: "Deploys run make release before notifying the channel", citations: [{ path: "ops.py", symbol: "deploy" }] });
  report.checks.cited = { id: cited.id, citations: cited.memory.citations };
  await vscode.window.showTextDocument(ops);
  const lensTitles = async () => ((await vscode.commands.executeCommand("vscode.executeCodeLensProvider", ops)) || [])
    .map((l) => l.command && l.command.title).filter(Boolean);
  api.lenses.refresh();
  report.checks.lensBefore = await lensTitles();
  const hover = await vscode.commands.executeCommand("vscode.executeHoverProvider", ops, new vscode.Position(1, 4));
  report.checks.hover = (hover || []).flatMap((h) => h.contents.map((c) => c.value || String(c))).join("\n");
  step("cited");
  fs.writeFileSync(ops.fsPath, fs.readFileSync(ops.fsPath, "utf8").replace("make release", "make ship"));
  let lensAfter = [];
  const deadline = Date.now() + 60000;
  while (Date.now() < deadline) {
    lensAfter = await lensTitles();
    if (lensAfter.some((t) => t.includes("cited code changed"))) break;
    await nextEvent(api.lenses.onDidChangeCodeLenses, Math.max(1, deadline - Date.now()));
  }
  report.checks.lensAfter = lensAfter;
  const reviewGroups = await api.review.getChildren();
  const changedGroup = reviewGroups.find((g) => g.kind === "group" && g.state === "changed");
  report.checks.citedChangedGroup = changedGroup ? {
    label: api.review.getTreeItem(changedGroup).label, ids: changedGroup.memories.map((m) => m.id),
  } : null;
  step("cited code changed");

  // the language-model tools: query returns the stored memory; remember names its origin
  const tools = (vscode.lm.tools || []).map((t) => t.name);
  report.checks.tools = tools;
  step("tools listed");
  const res = await within(vscode.lm.invokeTool("memls_query", { input: { query: "release branch Friday" }, toolInvocationToken: undefined }), 60000, "invokeTool memls_query");
  report.checks.toolText = res.content.map((p) => p.value || "").join("\n");
  const rem = await within(vscode.lm.invokeTool("memls_remember", { input: { text: "Integration tests run against a real Postgres, never mocks", type: "convention" }, toolInvocationToken: undefined }), 60000, "invokeTool memls_remember");
  const remText = rem.content.map((p) => p.value || "").join("\n");
  const remId = (/remembered: (\S+)/.exec(remText) || [])[1];
  const audit = await api.request("memory/audit", { project: stored.project, id: remId });
  report.checks.toolAudit = audit.entries.map((e) => ({ op: e.op, front: e.front }));
  step("tools");

  // the status bar and the views, then the picture
  report.checks.status = await api.status.update();
  const conflictNodes = await api.conflicts.getChildren();
  report.checks.conflictsView = conflictNodes.map((n) => n.kind === "conflict" ? api.conflicts.getTreeItem(n).label : n.kind);
  await vscode.commands.executeCommand("workbench.view.extension.memls");
  await vscode.window.showTextDocument(agents, { viewColumn: vscode.ViewColumn.One });
  await vscode.window.showTextDocument(claude, { viewColumn: vscode.ViewColumn.Two });
  await vscode.commands.executeCommand("workbench.actions.view.problems");
  await vscode.commands.executeCommand("workbench.view.extension.memls");
  await vscode.commands.executeCommand("workbench.action.closeAuxiliaryBar").then(undefined, () => undefined);
  await vscode.commands.executeCommand("notifications.clearAll").then(undefined, () => undefined);
  step("layout");
  report.ok = true;
  write({ readyForScreenshot: true });
}

exports.activate = () => {
  run().catch((err) => {
    report.error = String(err && err.stack || err);
    write({ readyForScreenshot: true });
  });
};
exports.deactivate = () => {};
