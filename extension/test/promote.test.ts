import { beforeEach, describe, expect, it, vi } from "vitest";
import * as vscode from "vscode";
import { NOTE, PromoteActions, promotable, promoteMemory } from "../src/commands/promote";
import { fakeRequest, folder, hit, noEditor, setEditor, setFolders } from "./fakes";

const A = folder("/w/a", 0);
const promoted = (p: any) => ({
  project: "/w/a", id: p.id, path: "/w/a/.memls/memory.md", uri: "file:///w/a/.memls/memory.md",
  sourceRange: "4:0-4:20", created: true, already: false, memory: hit(p.id, "Ship on Fridays"),
});

beforeEach(() => {
  vi.clearAllMocks();
  setFolders([A]);
  noEditor();
  (vscode.window.showInformationMessage as any).mockResolvedValue(undefined);
});

describe("Promote Memory to the Repository", () => {
  it("promotes a Review Queue item into the default note", async () => {
    const { request, calls } = fakeRequest({ "memory/promote": promoted });
    const memory = hit("m_1", "Ship on Fridays", { project: "/w/a" });
    const r = await promoteMemory(request, { kind: "memory", memory } as any);
    expect(r?.path).toBe("/w/a/.memls/memory.md");
    expect(calls).toEqual([{ method: "memory/promote", params: { id: "m_1", project: "/w/a", to: NOTE } }]);
    expect((vscode.window.showInformationMessage as any).mock.calls[0][0]).toContain(":5");
  });

  it("asks which memory, offering only those not in a note yet", async () => {
    setEditor("/w/a/app.py", "x");
    const memories = [
      hit("m_code", "Retries are capped at 3", { sourceUri: "file:///w/a/app.py" }),
      hit("m_note", "From AGENTS.md", { sourceUri: "file:///w/a/AGENTS.md" }),
      hit("m_flag", "Flagged one", { trust: "flagged" }),
    ];
    (vscode.window.showQuickPick as any).mockImplementation(async (items: any[]) => items[0]);
    const { request, calls } = fakeRequest({ "memory/list": () => ({ project: "/w/a", memories }), "memory/promote": promoted });
    await promoteMemory(request);
    const offered = (vscode.window.showQuickPick as any).mock.calls[0][0].map((i: any) => i.detail);
    expect(offered).toEqual(["m_code"]);
    expect(calls[1]).toEqual({ method: "memory/promote", params: { id: "m_code", project: "/p", to: NOTE } });
  });

  it("nothing to promote: says so and writes nothing", async () => {
    setEditor("/w/a/app.py", "x");
    const { request, calls } = fakeRequest({ "memory/list": () => ({ project: "/w/a", memories: [] }) });
    expect(await promoteMemory(request)).toBeUndefined();
    expect(calls.map((c) => c.method)).toEqual(["memory/list"]);
  });

  it("what can be promoted", () => {
    expect(promotable(hit("a", "x", { sourceUri: "file:///w/a/app.py" }))).toBe(true);
    expect(promotable(hit("b", "x", { sourceUri: "file:///w/a/.memls/memory.md" }))).toBe(false);
    expect(promotable(hit("c", "x", { status: "superseded" }))).toBe(false);
    expect(promotable(hit("d", "x", { trust: "rejected" }))).toBe(false);
  });
});

describe("the promote code action", () => {
  it("is offered on the lines a memory comes from, and runs memls.promote", async () => {
    const uri = vscode.Uri.file("/w/a/app.py");
    const memories = [
      hit("m_here", "Retries are capped at 3", { sourceUri: uri.toString(), sourceRange: "10:0-12:5", project: "/w/a" }),
      hit("m_else", "Elsewhere", { sourceUri: vscode.Uri.file("/w/a/other.py").toString(), sourceRange: "10:0-12:5" }),
    ];
    const { request, calls } = fakeRequest({ "memory/list": () => ({ project: "/w/a", memories }) });
    const actions = new PromoteActions(request);
    const doc = { uri } as vscode.TextDocument;
    const at = (line: number) => actions.provideCodeActions(doc, new vscode.Range(line, 0, line, 0));
    const [action] = await at(11);
    expect(action.title).toContain("Retries are capped at 3");
    expect(action.command).toEqual({ command: "memls.promote", title: "Promote Memory", arguments: [{ id: "m_here", project: "/w/a" }] });
    expect(await at(13)).toEqual([]);
    expect(calls.length).toBe(1); // listed once until the next change
    actions.forget();
    await at(10);
    expect(calls.length).toBe(2);
  });
});
