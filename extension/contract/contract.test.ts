// The contract: the real Python server (`memls serve --stdio` from the repository's .venv) over
// stdio through vscode-jsonrpc's message connection (what vscode-languageclient uses), every
// memory/* request with the generated TypeScript types, the extension's initializationOptions,
// and the contradiction diagnostics it publishes.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMessageConnection, type MessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { DEFAULTS, initializationOptions } from "../src/settings";
import { REQUEST_METHODS, type ChangedNotification, type Method, type ParamsOf, type ResultOf } from "../src/wire";

const REPO = resolve(__dirname, "..", "..");
const MEMLS = process.env.MEMLS_BIN ?? join(REPO, ".venv", "bin", "memls");
const YARN = "We use yarn for package management";
const PNPM = "We switched from yarn to pnpm for package management";

let root: string;
let ws: string;
let wsUri: string;
let agentsUri: string;
let proc: ChildProcess;
let conn: MessageConnection;
const exercised = new Set<string>();
const diagnostics = new Map<string, any[]>();
const changed: ChangedNotification[] = [];
const progress: any[] = [];
const waiters: (() => void)[] = [];
const wake = () => waiters.splice(0).forEach((w) => w());

/** Resolves when `test` holds, checked on every message from the server (no polling). */
function until<T>(test: () => T | undefined, ms: number, what: string): Promise<T> {
  return new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
    const check = () => {
      const v = test();
      if (v) { clearTimeout(timer); res(v); } else waiters.push(check);
    };
    check();
  });
}

async function req<M extends Method>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
  exercised.add(method);
  return conn.sendRequest(method, params) as Promise<ResultOf<M>>;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "memls-contract-"));
  ws = join(root, "proj");
  mkdirSync(ws);
  // a note's own units are compared only across a change it records (the Update section)
  writeFileSync(join(ws, "AGENTS.md"), `# Notes\n\n- ${YARN}\n\n## Update 2024-05-01\n\n- ${PNPM}\n`);
  wsUri = pathToFileURL(ws).toString();
  agentsUri = pathToFileURL(join(ws, "AGENTS.md")).toString();
  proc = spawn(MEMLS, ["--data-dir", join(root, "data"), "serve", "--stdio"], { stdio: ["pipe", "pipe", "pipe"] });
  proc.stderr!.on("data", () => undefined);
  conn = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
  conn.onNotification("textDocument/publishDiagnostics", (p: any) => { diagnostics.set(p.uri, p.diagnostics); wake(); });
  conn.onNotification("memory/changed", (p: ChangedNotification) => { changed.push(p); wake(); });
  conn.onNotification("memory/conflicts", () => wake());
  conn.onNotification("$/progress", (p: any) => { progress.push(p); wake(); });
  conn.onRequest("window/workDoneProgress/create", () => null);
  conn.onRequest("client/registerCapability", () => null);
  conn.onRequest("workspace/configuration", (p: any) => p.items.map(() => ({ rerank: DEFAULTS.rerank })));
  conn.onNotification("window/showMessage", () => undefined);
  conn.onNotification("window/logMessage", () => undefined);
  conn.listen();
  const init: any = await conn.sendRequest("initialize", {
    processId: process.pid, rootUri: wsUri, workspaceFolders: [{ uri: wsUri, name: "proj" }],
    capabilities: { window: { workDoneProgress: true }, workspace: { configuration: true, workspaceFolders: true } },
    initializationOptions: initializationOptions(DEFAULTS),
  });
  expect(init.serverInfo.name).toBe("memls");
  await conn.sendNotification("initialized", {});
}, 60_000);

afterAll(async () => {
  try {
    await conn.sendRequest("shutdown");
    await conn.sendNotification("exit");
  } catch { /* already gone */ }
  await new Promise((r) => { if (proc.exitCode !== null) r(null); else { proc.on("exit", r); setTimeout(() => { proc.kill(); r(null); }, 10_000); } });
  conn.dispose();
  rmSync(root, { recursive: true, force: true });
}, 30_000);

describe("memory/* over stdio with the generated types", () => {
  let id = "";
  let second = "";

  it("health, with no project data", async () => {
    const h = await req("memory/health", {});
    expect(h.ok).toBe(true);
    expect(typeof h.schemaVersion).toBe("number");
  });

  it("indexes the notes with $/progress and publishes the contradiction on both lines", async () => {
    const found = await until(() => { const d = diagnostics.get(agentsUri); return d && d.length >= 2 ? d : undefined; }, 90_000, "diagnostics on AGENTS.md");
    expect(found.every((d: any) => d.source === "memls" && d.severity === 2)).toBe(true);
    expect(found.map((d: any) => d.range.start.line).sort()).toEqual([2, 6]);
    expect(found.find((d: any) => d.range.start.line === 2).message).toContain(PNPM);
    expect(progress.some((p) => p.value?.kind === "begin")).toBe(true);
    const actions: any[] = await conn.sendRequest("textDocument/codeAction", {
      textDocument: { uri: agentsUri }, range: found[0].range, context: { diagnostics: [found[0]] } });
    expect(actions.map((a) => a.title)).toEqual(expect.arrayContaining(["Supersede the older statement", "Not a contradiction"]));
  }, 100_000);

  it("store (folder uri as the project), get, list", async () => {
    const s = await req("memory/store", { uri: wsUri, text: "Releases are cut from main every Friday", type: "decision",
      sourceUri: pathToFileURL(join(ws, "plan.txt")).toString(), sourceRange: "1:0-1:39" });
    expect(s.project).toBe(ws);
    expect(s.created).toBe(true);
    id = s.id;
    await until(() => changed.find((c) => c.op === "store" && c.ids.includes(id)), 10_000, "memory/changed for the store");
    const g = await req("memory/get", { uri: wsUri, id });
    expect(g.sourceRange).toBe("1:0-1:39");
    const l = await req("memory/list", { uri: wsUri, type: "decision" });
    expect(l.memories.map((m) => m.id)).toContain(id);
    second = (await req("memory/store", { uri: wsUri, text: "Releases are cut from main every Monday", type: "decision" })).id;
  });

  it("a store names its origin in the audit log", async () => {
    const s = await req("memory/store", { uri: wsUri, text: "Integration tests use a real Postgres", type: "convention", origin: "vscode-lm-tool" });
    const a = await req("memory/audit", { uri: wsUri, id: s.id });
    expect(a.entries.find((e) => e.op === "store")?.front).toBe("lsp:vscode-lm-tool");
    await expect(req("memory/store", { uri: wsUri, text: "x", origin: "not valid!" })).rejects.toMatchObject({ code: -32602, data: { field: "origin" } });
  });

  it("query: interactive depth, explain, no re-rank", async () => {
    const q = await req("memory/query", { uri: wsUri, query: "when are releases cut", mode: "interactive", rerankDepth: DEFAULTS.interactiveDepth, explain: true });
    expect(q.results.map((r) => r.id)).toContain(id);
    expect(q.results[0].explain).toBeTruthy();
    const q2 = await req("memory/query", { uri: wsUri, query: "releases", rerank: false, k: 3 });
    expect(q2.results.length).toBeLessThanOrEqual(3);
  });

  it("feedback flags; review lists it and approve empties the queue", async () => {
    await req("memory/feedback", { uri: wsUri, id, signal: "outdated" });
    const f = await req("memory/feedback", { uri: wsUri, id, signal: "outdated", query: "releases" });
    expect(f.trust).toBe("flagged");
    expect((await req("memory/review", { uri: wsUri, action: "list", state: "flagged" })).memories?.map((m) => m.id)).toEqual([id]);
    const r = await req("memory/review", { uri: wsUri, action: "approve", id });
    expect(r.transition?.toTrust).toBe("verified");
    expect((await req("memory/review", { uri: wsUri, action: "list" })).memories).toEqual([]);
  });

  it("supersede, forget, forgotten", async () => {
    const s = await req("memory/supersede", { uri: wsUri, old: id, by: second });
    expect(s.old.status).toBe("superseded");
    const f = await req("memory/forget", { uri: wsUri, id: second, reason: "user_deleted" });
    expect(f.reason).toBe("user_deleted");
    const log = await req("memory/forgotten", { uri: wsUri, reason: "user_deleted" });
    expect(log.entries.map((e) => e.memoryId)).toContain(second);
  });

  it("conflicts and resolve (dismiss clears the diagnostics)", async () => {
    const c = await req("memory/conflicts", { uri: wsUri, status: "open" });
    const pair = c.conflicts.find((x) => x.newer.sourceUri === agentsUri)!;
    expect(pair.signals.length).toBeGreaterThan(0);
    const r = await req("memory/resolve", { uri: wsUri, a: pair.newer.id, b: pair.older.id, action: "dismiss" });
    expect(r.conflict.status).toBe("dismissed");
    await until(() => (diagnostics.get(agentsUri)?.length === 0 ? true : undefined), 10_000, "diagnostics cleared");
  });

  it("checkPair, stats, maintain, deadLetters, reindex, doctor, syncNote, ingest", async () => {
    const v = await req("memory/checkPair", { new: PNPM, existing: YARN });
    expect(v.contradiction).toBe(true);
    const st = await req("memory/stats", { uri: wsUri });
    expect(st.memories).toBeGreaterThan(0);
    expect((await req("memory/maintain", { uri: wsUri })).project).toBe(ws);
    expect((await req("memory/deadLetters", { uri: wsUri })).failed).toEqual([]);
    expect((await req("memory/reindex", { uri: wsUri })).project).toBe(ws);
    expect(typeof (await req("memory/doctor", { uri: wsUri })).ok).toBe("boolean");
    const sync = await req("memory/syncNote", { uri: pathToFileURL(join(ws, "CLAUDE.md")).toString(), text: "- Use UTC everywhere\n" });
    expect(sync.added).toHaveLength(1);
    const ing = await req("memory/ingest", { uri: wsUri, items: [{ text: "Releases are tagged vX.Y.Z" }, { text: "Logs go to Loki" }] });
    expect([ing.project, ing.stored, ing.duplicates, ing.indexed]).toEqual([ws, 2, 0, true]);
    expect((await req("memory/query", { uri: wsUri, query: "Loki logs", depth: "none" })).results.map((h) => h.content)).toContain("Logs go to Loki");
  });

  it("context (the briefing) and promote (the memory becomes a note's unit)", async () => {
    const s = await req("memory/store", { uri: wsUri, text: "Never deploy on a Friday afternoon", type: "constraint" });
    const b = await req("memory/context", { uri: wsUri, prompt: "can I deploy now", budget: 400, session: "contract" });
    expect(b.markdown).toContain(s.id);
    expect(b.tokens).toBeLessThanOrEqual(400);
    expect((await req("memory/context", { uri: wsUri, session: "contract" })).entries?.map((e) => e.memory.id) ?? []).not.toContain(s.id);
    const p = await req("memory/promote", { uri: wsUri, id: s.id });
    expect(p.path).toBe(join(ws, ".memls", "memory.md"));
    expect(p.memory.sourceUri).toBe(p.uri);
    await expect(req("memory/context", { uri: wsUri, budget: 10 })).rejects.toMatchObject({ code: -32602, data: { field: "budget" } });
  });

  it("citations: store citing code, the memories citing a document, check, reconfirm", async () => {
    const ops = join(ws, "ops.py");
    writeFileSync(ops, "def deploy(env):\n    run('make release', env)\n    notify(env)\n");
    const s = await req("memory/store", { uri: wsUri, text: "Deploys run make release first",
      citations: [{ path: "ops.py", symbol: "deploy" }] });
    expect(s.memory.citations?.map((c) => [c.path, c.startLine, c.endLine, c.state])).toEqual([["ops.py", 1, 3, "fresh"]]);
    const cited = await req("memory/citations", { uri: pathToFileURL(ops).toString() });
    expect(cited.ranges.map((r) => [r.memory, r.startLine, r.stale])).toEqual([[s.id, 1, false]]);
    writeFileSync(ops, "def deploy(env):\n    run('make ship', env)\n    notify(env)\n");
    const checked = await req("memory/check", { uri: wsUri });
    expect(checked.citations.map((c) => [c.memory, c.state])).toEqual([[s.id, "changed"]]);
    const again = await req("memory/reconfirm", { uri: wsUri, id: s.id });
    expect(again.memory.stale).toBe(false);
    await expect(req("memory/store", { uri: wsUri, text: "x", citations: [{ path: "../out.py" }] }))
      .rejects.toMatchObject({ code: -32602, data: { field: "citations[0].path" } });
  });

  it("the daemon watches the workspace's notes: watch, watched, unwatch", async () => {
    const w = await req("memory/watch", { uri: wsUri, wait: 10 });
    expect(w.watching).toBe(true);
    expect(w.indexed).toBe(true);
    expect((w.notes ?? []).map((n) => n.uri)).toContain(agentsUri);
    const listed = await req("memory/watched", {});
    expect(listed.projects.map((x) => x.project)).toContain(w.project);
    expect((await req("memory/unwatch", { uri: wsUri })).removed).toBe(true);
    expect((await req("memory/watched", {})).projects.map((x) => x.project)).not.toContain(w.project);
    expect((await req("memory/watch", { uri: wsUri, wait: 0 })).added).toBe(true);
  });

  it("bad input is refused naming the field", async () => {
    await expect(req("memory/store", { uri: wsUri, text: "x", type: "bogus" as any })).rejects.toMatchObject({ code: -32602, data: { field: "type" } });
    await expect(req("memory/get", { uri: "file:///elsewhere/x.md", id: "m" })).rejects.toMatchObject({ code: -32602, data: { field: "uri" } });
    // an import from a file that is not the tool's store changes nothing and names the source
    const notAStore = join(root, "not-a-store.db");
    writeFileSync(notAStore, "plain text, not SQLite\n");
    await expect(req("memory/importFrom", { from: "omega", source: pathToFileURL(notAStore).toString(), project: wsUri, dryRun: false }))
      .rejects.toMatchObject({ code: -32602, data: { field: "source" } });
  });

  it("every memory/* request was exercised", () => {
    expect([...exercised].sort()).toEqual([...REQUEST_METHODS].sort());
  });
});
