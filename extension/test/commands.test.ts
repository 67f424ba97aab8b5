import { beforeEach, describe, expect, it, vi } from "vitest";
import * as vscode from "vscode";
import { expectVerdict, onConflicts, rememberSelection } from "../src/commands/remember";
import { BUTTONS, Search, searchMemory, toItem } from "../src/commands/search";
import { showForgotten } from "../src/commands/forgotten";
import { pickFolder, folderFor } from "../src/folders";
import { runQuery, runRemember, TOOL_ORIGIN } from "../src/lmTools";
import { DEFAULTS } from "../src/settings";
import { ReviewTree, reviewAction } from "../src/views/review";
import { ConflictsTree, resolveConflict } from "../src/views/conflicts";
import { fakeQuickPick, fakeRequest, folder, hit, noEditor, setEditor, setFolders } from "./fakes";

const A = folder("/w/a", 0);
const B = folder("/w/b", 1);
const stored = (p: any) => ({ id: "m_new", project: "/w/a", created: true, duplicate: false, memory: { ...hit("m_new", p.text), type: p.type } });

beforeEach(() => {
  vi.clearAllMocks();
  setFolders([A, B]);
  noEditor();
});

describe("project of a command", () => {
  it("is the active editor's folder", async () => {
    setEditor("/w/b/notes.txt", "x");
    expect((await pickFolder())?.name).toBe("b");
    expect(vscode.window.showWorkspaceFolderPick).not.toHaveBeenCalled();
  });

  it("is asked for when there is no editor and several folders", async () => {
    (vscode.window.showWorkspaceFolderPick as any).mockResolvedValue(B);
    expect(await pickFolder()).toBe(B);
    expect(vscode.window.showWorkspaceFolderPick).toHaveBeenCalledOnce();
  });

  it("is never 'no project': without folders nothing runs", async () => {
    setFolders([]);
    const { request, calls } = fakeRequest({});
    expect(await rememberSelection(request, { text: "x", type: "fact" })).toBeUndefined();
    expect(calls).toEqual([]);
    expect(vscode.window.showWarningMessage).toHaveBeenCalled();
  });

  it("a tool names the folder or fails plainly in a multi-root window", () => {
    expect(folderFor("b")).toBe(B);
    expect(() => folderFor(undefined)).toThrow(/2 folders/);
    expect(() => folderFor("zzz")).toThrow(/no workspace folder named/);
  });
});

describe("Remember Selection", () => {
  it("stores the selection with its file and range, as the picked type", async () => {
    setEditor("/w/a/plan.txt", "Plan\nShip on Fridays\n", [1, 0, 1, 16]);
    (vscode.window.showQuickPick as any).mockResolvedValue({ label: "decision" });
    const { request, calls } = fakeRequest({ "memory/store": stored });
    const r = await rememberSelection(request);
    expect(r?.id).toBe("m_new");
    expect(calls[0]).toEqual({ method: "memory/store", params: {
      uri: A.uri.toString(), text: "Ship on Fridays", type: "decision",
      sourceUri: vscode.Uri.file("/w/a/plan.txt").toString(), sourceRange: "1:0-1:16",
      citations: [{ path: "plan.txt", startLine: 2, endLine: 2 }] } });
  });

  it("asks for a line when nothing is selected; cancelling stores nothing", async () => {
    setEditor("/w/a/plan.txt", "Plan");
    (vscode.window.showInputBox as any).mockResolvedValue(undefined);
    const { request, calls } = fakeRequest({});
    expect(await rememberSelection(request)).toBeUndefined();
    expect(vscode.window.showInputBox).toHaveBeenCalledOnce();
    expect(calls).toEqual([]);
  });

  it("shows the contradiction verdict for its memory; Supersede resolves it", async () => {
    expectVerdict("m_new", "/w/a");
    (vscode.window.showWarningMessage as any).mockResolvedValue("Supersede");
    const { request, calls } = fakeRequest({ "memory/resolve": () => ({}) });
    const conflict: any = { project: "/w/a", newer: hit("m_new", "pnpm"), older: hit("m_old", "We use yarn"), confidence: 0.85, signals: [{ kind: "temporal_override", triggers: [], weight: 1 }] };
    expect(await onConflicts(request, { project: "/w/a", id: "m_new", conflicts: [conflict] })).toBe("Supersede");
    expect((vscode.window.showWarningMessage as any).mock.calls[0][0]).toContain("We use yarn");
    expect(calls).toEqual([{ method: "memory/resolve", params: { project: "/w/a", a: "m_new", b: "m_old", action: "supersede" } }]);
  });

  it("Keep both dismisses; a verdict for a memory it did not store is not shown", async () => {
    const { request, calls } = fakeRequest({ "memory/resolve": () => ({}) });
    const conflict: any = { project: "/w/a", newer: hit("m_2", "a"), older: hit("m_1", "b"), confidence: 0.7, signals: [] };
    expect(await onConflicts(request, { project: "/w/a", id: "m_2", conflicts: [conflict] })).toBeUndefined();
    expectVerdict("m_2", "/w/a");
    (vscode.window.showWarningMessage as any).mockResolvedValue("Keep both");
    await onConflicts(request, { project: "/w/a", id: "m_2", conflicts: [conflict] });
    expect(calls[0].params.action).toBe("dismiss");
  });
});

describe("Search Memory", () => {
  it("queries at the interactive depth and shows every result (no client-side filter)", async () => {
    setEditor("/w/a/x.md", "");
    const { pick } = fakeQuickPick();
    const { request, calls } = fakeRequest({ "memory/query": () => ({ project: "/w/a", results: [hit("m1", "Ship on Fridays")], degraded: [] }) });
    const r = await searchMemory(request, DEFAULTS, { query: "when do we ship" });
    expect(r?.results[0].id).toBe("m1");
    expect(calls[0].params).toMatchObject({ uri: A.uri.toString(), query: "when do we ship", mode: "interactive", rerankDepth: 0, explain: true });
    expect(pick.items[0].alwaysShow).toBe(true);
    expect(pick.items[0].description).toContain("decision · candidate");
  });

  it("debounces typing: one query for a burst of keys", async () => {
    vi.useFakeTimers();
    const { handlers } = fakeQuickPick();
    const { request, calls } = fakeRequest({ "memory/query": () => ({ project: "/w/a", results: [], degraded: [] }) });
    new Search(request, A, DEFAULTS);
    for (const v of ["s", "sh", "shi", "ship"]) handlers.value(v);
    await vi.advanceTimersByTimeAsync(500);
    vi.useRealTimers();
    expect(calls.map((c) => c.params.query)).toEqual(["ship"]);
  });

  it("drops an older query's answer that arrives after a newer one", async () => {
    const { pick } = fakeQuickPick();
    let release: (v: any) => void = () => {};
    const slow = new Promise((r) => (release = r));
    let n = 0;
    const { request } = fakeRequest({ "memory/query": (p: any) => (n++ === 0 ? slow : { project: "/w/a", results: [hit("new", p.query)] }) });
    const s = new Search(request, A, DEFAULTS);
    const first = s.run("old");
    await s.run("new");
    release({ project: "/w/a", results: [hit("old", "old")] });
    expect(await first).toBeUndefined();
    expect(pick.items.map((i: any) => i.hit.id)).toEqual(["new"]);
  });

  it("item buttons: feedback, explain, forget with a reason of the server's vocabulary", async () => {
    const { pick } = fakeQuickPick();
    const { request, calls } = fakeRequest({
      "memory/feedback": () => ({ project: "/p", id: "m1", signal: "outdated", score: -2, trust: "candidate" }),
      "memory/forget": () => ({ project: "/p", id: "m1", reason: "user_deleted", at: "now" }),
    });
    const s = new Search(request, A, DEFAULTS);
    pick.items = [toItem(hit("m1", "x", { explain: { fused: 0.4, stage: "fused", bm25: 2 } }))];
    await s.button(pick.items[0], BUTTONS.outdated);
    expect(calls[0]).toEqual({ method: "memory/feedback", params: { project: "/p", id: "m1", signal: "outdated", query: null } });
    expect(pick.items[0].hit.feedbackScore).toBe(-2);
    await s.button(pick.items[0], BUTTONS.explain);
    expect(pick.items[0].detail).toContain("bm25 2.000");
    (vscode.window.showQuickPick as any).mockImplementation(async (items: any[]) => items.find((i) => i.label === "user_deleted"));
    await s.button(pick.items[0], BUTTONS.forget);
    const offered = (vscode.window.showQuickPick as any).mock.calls[0][0].map((i: any) => i.label);
    expect(offered).toContain("source_removed");
    expect(calls[1]).toEqual({ method: "memory/forget", params: { project: "/p", id: "m1", reason: "user_deleted" } });
    expect(pick.items).toEqual([]);
  });
});

describe("Forgotten", () => {
  it("filters the log by the picked reason", async () => {
    setEditor("/w/b/x.md", "");
    const { request, calls } = fakeRequest({ "memory/forgotten": () => ({ project: "/w/b", entries: [{ memoryId: "m", project: "/w/b", reason: "decay", preview: "old", type: "note", at: "2026-01-01T00:00:00Z", front: "cli" }] }) });
    const r = await showForgotten(request, { reason: "decay" });
    expect(calls[0].params).toEqual({ uri: B.uri.toString(), limit: 200, reason: "decay" });
    expect(r?.entries).toHaveLength(1);
  });

  it("refuses an unknown reason by name", async () => {
    setEditor("/w/b/x.md", "");
    const { request, calls } = fakeRequest({});
    await showForgotten(request, { reason: "bogus" });
    expect(calls).toEqual([]);
    expect((vscode.window.showErrorMessage as any).mock.calls[0][0]).toContain("unknown reason bogus");
  });
});

describe("Review Queue", () => {
  const flaggedMemory = hit("m_f", "Deploys need two approvals", { trust: "flagged", project: "/w/a" });

  it("lists flagged and candidate memories per folder; approve acts on the memory's project", async () => {
    setFolders([A]);
    const { request, calls } = fakeRequest({
      "memory/review": (p: any) => p.action === "list"
        ? { project: "/w/a", action: "list", memories: p.state === "flagged" ? [flaggedMemory] : [] }
        : { project: "/w/a", action: p.action, memories: [] },
    });
    const tree = new ReviewTree(request, () => [A]);
    const groups = await tree.getChildren();
    expect(groups.map((g: any) => [g.state, g.memories.length])).toEqual([["flagged", 1], ["changed", 0], ["candidate", 0]]);
    const [node] = await tree.getChildren(groups[0]);
    const item = tree.getTreeItem(node);
    expect(item.contextValue).toBe("memory.flagged");
    expect(tree.getTreeItem(groups[0]).label).toBe("Flagged (1)");
    await reviewAction(request, "approve", node);
    expect(calls.at(-1)).toEqual({ method: "memory/review", params: { project: "/w/a", action: "approve", id: "m_f" } });
  });

  it("shows one node per folder in a multi-root window", async () => {
    const { request } = fakeRequest({});
    const tree = new ReviewTree(request, () => [A, B]);
    expect((await tree.getChildren()).map((n: any) => n.folder.name)).toEqual(["a", "b"]);
  });
});

describe("Conflicts", () => {
  const conflict: any = { project: "/w/a", status: "open", confidence: 0.85, signals: [{ kind: "choice_change", triggers: ["yarn", "pnpm"], weight: 1 }],
    newer: hit("m_new", "We switched to pnpm", { sourceUri: "file:///w/a/CLAUDE.md", sourceRange: "3:0-3:20" }),
    older: hit("m_old", "We use yarn", { sourceUri: "file:///w/a/AGENTS.md", sourceRange: "3:0-3:12" }) };

  it("shows both statements, confidence and signals; a click opens the note at the line", async () => {
    const { request } = fakeRequest({ "memory/conflicts": () => ({ project: "/w/a", conflicts: [conflict] }) });
    const tree = new ConflictsTree(request, () => [A]);
    const [node] = await tree.getChildren();
    const item = tree.getTreeItem(node);
    expect(item.label).toContain("pnpm");
    expect(item.label).toContain("yarn");
    expect(item.description).toBe("confidence 0.85 · choice_change (yarn, pnpm)");
    expect(item.command?.arguments).toEqual(["file:///w/a/CLAUDE.md", "3:0-3:20"]);
    expect((await tree.getChildren(node)).map((n: any) => n.role)).toEqual(["newer", "older"]);
  });

  it("names the pair in the server's words: the kind, each side quoted at its path and line", async () => {
    const words = { kind: "a later switch", newerPlace: "CLAUDE.md:4", newerQuote: "We switched to pnpm",
      olderPlace: "AGENTS.md:4", olderQuote: "We use yarn" };
    const { request } = fakeRequest({ "memory/conflicts": () => ({ project: "/w/a", conflicts: [{ ...conflict, words }] }) });
    const tree = new ConflictsTree(request, () => [A]);
    const [node] = await tree.getChildren();
    expect(tree.getTreeItem(node).label).toBe("A later switch: CLAUDE.md:4  ⟷  AGENTS.md:4");
    const sides = await tree.getChildren(node);
    expect(sides.map((n) => tree.getTreeItem(n).label)).toEqual([
      "newer, CLAUDE.md:4: “We switched to pnpm”", "older, AGENTS.md:4: “We use yarn”"]);
  });

  it("resolves either way, or dismisses", async () => {
    const { request, calls } = fakeRequest({ "memory/resolve": () => ({}), "memory/supersede": () => ({}) });
    const node = { kind: "conflict" as const, conflict };
    await resolveConflict(request, "older", node);
    await resolveConflict(request, "newer", node);
    await resolveConflict(request, "dismiss", node);
    expect(calls.map((c) => [c.method, c.params.action ?? `${c.params.old}->${c.params.by}`])).toEqual([
      ["memory/resolve", "supersede"], ["memory/supersede", "m_new->m_old"], ["memory/resolve", "resolve"], ["memory/resolve", "dismiss"]]);
  });
});

describe("language-model tools", () => {
  it("query returns recalled data with provenance", async () => {
    setEditor("/w/a/x.md", "");
    const { request, calls } = fakeRequest({ "memory/query": () => ({ project: "/w/a", results: [hit("m1", "Ship on Fridays", { trust: "verified" })], degraded: [] }) });
    const text = await runQuery(request, DEFAULTS, { query: "ship" });
    expect(calls[0].params).toEqual({ uri: A.uri.toString(), query: "ship", k: 5 });
    expect(text).toMatch(/^RECALLED DATA/);
    expect(text).toContain('"id": "m1"');
    expect(text).toContain('"trust": "verified"');
  });

  it("remember names its origin and refuses bad input by field", async () => {
    const { request, calls } = fakeRequest({ "memory/store": stored });
    const text = await runRemember(request, { text: "Use UTC everywhere", type: "convention", folder: "a" });
    expect(calls[0].params).toEqual({ uri: A.uri.toString(), text: "Use UTC everywhere", type: "convention", origin: TOOL_ORIGIN });
    expect(text).toContain("remembered: m_new");
    await expect(runRemember(request, { text: " " })).rejects.toThrow(/^text:/);
    await expect(runRemember(request, { text: "x", type: "bogus" as any, folder: "a" })).rejects.toThrow(/^type:/);
  });

  it("remember says when the claim was already remembered in other words", async () => {
    const { request } = fakeRequest({
      "memory/store": (p: any) => ({ ...stored(p), id: "m_old", created: false, duplicate: "near" }),
    });
    const text = await runRemember(request, { text: "We ship on Fridays", folder: "a" });
    expect(text).toContain("already remembered in other words: m_old");
  });
});
