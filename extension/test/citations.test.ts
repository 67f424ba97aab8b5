import { beforeEach, describe, expect, it, vi } from "vitest";
import * as vscode from "vscode";
import { lensTitle } from "../src/format";
import { activePaths } from "../src/commands/search";
import { CitationLenses } from "../src/views/citations";
import { ReviewTree, citedCodeAction } from "../src/views/review";
import { fakeRequest, folder, hit, noEditor, setEditor, setFolders } from "./fakes";

const A = folder("/w/a", 0);

function doc(path: string, lines = 40): any {
  return { uri: vscode.Uri.file(path), lineCount: lines };
}

beforeEach(() => {
  vi.clearAllMocks();
  setFolders([A]);
  noEditor();
});

describe("code to its memories", () => {
  const ranges = [
    { memory: "m_1", preview: "save() truncates", startLine: 9, endLine: 11, state: "fresh", stale: false },
    { memory: "m_2", preview: "save() writes utf-8", startLine: 9, endLine: 11, state: "changed", stale: true },
    { memory: "m_3", preview: "load reads all", startLine: 4, endLine: 6, state: "moved", stale: false },
  ];

  it("puts one CodeLens over each cited range, marked when its code changed", async () => {
    const { request, calls } = fakeRequest({ "memory/citations": () => ({ project: "/w/a", path: "src/io.py", ranges }) });
    const lenses = new CitationLenses(request);
    const found = await lenses.provideCodeLenses(doc("/w/a/src/io.py"));
    expect(found.map((l) => [l.range.start.line, l.command?.title])).toEqual([
      [8, "memls: 2 memories · cited code changed (1)"],
      [3, "memls: 1 memory"],
    ]);
    expect(calls).toEqual([{ method: "memory/citations", params: { uri: vscode.Uri.file("/w/a/src/io.py").toString() } }]);
    await lenses.provideCodeLenses(doc("/w/a/src/io.py"));
    expect(calls).toHaveLength(1); // asked once until memory/changed refreshes
    lenses.refresh();
    await lenses.provideCodeLenses(doc("/w/a/src/io.py"));
    expect(calls).toHaveLength(2);
  });

  it("asks nothing for documents outside the workspace folders", async () => {
    const { request, calls } = fakeRequest({});
    expect(await new CitationLenses(request).provideCodeLenses(doc("/elsewhere/x.py"))).toEqual([]);
    expect(calls).toEqual([]);
  });

  it("names the state in the title", () => {
    expect(lensTitle([{ stale: false, state: "fresh" }])).toBe("memls: 1 memory");
  });

  it("passes the active file to Search Memory", () => {
    setEditor("/w/a/src/io.py", "x");
    expect(activePaths(A)).toEqual(["src/io.py"]);
    setEditor("/elsewhere/x.py", "x");
    expect(activePaths(A)).toEqual([]);
  });
});

describe("Cited code changed", () => {
  const stale = { ...hit("m_s", "save() truncates the file", { project: "/w/a" }), stale: true,
    citations: [{ path: "src/io.py", startLine: 9, endLine: 11, state: "changed", kind: "symbol", symbol: "save", inferred: false, diff: "-a\n+b" }] };

  it("is a group of the review queue with re-confirm, edit and forget", async () => {
    const { request, calls } = fakeRequest({
      "memory/review": (p: any) => ({ project: "/w/a", action: "list", memories: [],
        citedCodeChanged: p.state === "flagged" ? [stale] : [] }),
      "memory/reconfirm": () => ({ project: "/w/a", memory: stale }),
      "memory/forget": () => ({}),
      "memory/store": () => ({ id: "m_new", project: "/w/a" }),
      "memory/supersede": () => ({}),
    });
    const tree = new ReviewTree(request, () => [A]);
    const groups = await tree.getChildren();
    const changed: any = groups.find((g: any) => g.state === "changed");
    expect(tree.getTreeItem(changed).label).toBe("Cited code changed (1)");
    const [node] = await tree.getChildren(changed);
    const item = tree.getTreeItem(node);
    expect(item.contextValue).toBe("memory.citedCodeChanged");
    expect(item.description).toBe("src/io.py:9-11 changed");
    await citedCodeAction(request, "reconfirm", node);
    expect(calls.at(-1)).toEqual({ method: "memory/reconfirm", params: { project: "/w/a", id: "m_s" } });
    await citedCodeAction(request, "forget", node);
    expect(calls.at(-1)).toEqual({ method: "memory/forget", params: { project: "/w/a", id: "m_s", reason: "source_changed" } });
    (vscode.window.showInputBox as any).mockResolvedValue("save() appends to the file");
    await citedCodeAction(request, "edit", node);
    expect(calls.slice(-2)).toEqual([
      { method: "memory/store", params: { project: "/w/a", text: "save() appends to the file", type: stale.type,
        citations: [{ path: "src/io.py", symbol: "save" }] } },
      { method: "memory/supersede", params: { project: "/w/a", old: "m_s", by: "m_new" } },
    ]);
  });
});
