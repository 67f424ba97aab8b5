// Helpers over jest-mock-vscode: workspace folders, an editor with a selection, a QuickPick.
import { vi } from "vitest";
import * as vscode from "vscode";
import type { QueryHit, Request } from "../src/wire";

export function folder(path: string, index = 0): vscode.WorkspaceFolder {
  return { uri: vscode.Uri.file(path), name: path.split("/").pop()!, index };
}

export function setFolders(folders: vscode.WorkspaceFolder[]): void {
  (vscode.workspace as any).setWorkspaceFolders(folders);
  (vscode.workspace.getWorkspaceFolder as any).mockImplementation((uri: vscode.Uri) =>
    folders.find((f) => uri.fsPath === f.uri.fsPath || uri.fsPath.startsWith(f.uri.fsPath + "/")));
}

export function setEditor(file: string, text: string, selection?: [number, number, number, number]): void {
  const lines = text.split("\n");
  const uri = vscode.Uri.file(file);
  const sel = selection ? new vscode.Selection(selection[0], selection[1], selection[2], selection[3]) : new vscode.Selection(0, 0, 0, 0);
  (vscode.window as any).activeTextEditor = {
    document: {
      uri,
      getText: (r?: vscode.Range) => {
        if (!r) return text;
        if (r.start.line === r.end.line) return lines[r.start.line].slice(r.start.character, r.end.character);
        return [lines[r.start.line].slice(r.start.character), ...lines.slice(r.start.line + 1, r.end.line),
          lines[r.end.line].slice(0, r.end.character)].join("\n");
      },
    },
    selection: sel,
  };
}

export function noEditor(): void {
  (vscode.window as any).activeTextEditor = undefined;
}

/** A request function that answers from a table and records every call. */
export function fakeRequest(answers: Record<string, (params: any) => any>) {
  const calls: { method: string; params: any }[] = [];
  const request = (async (method: string, params: any) => {
    calls.push({ method, params });
    const answer = answers[method];
    if (!answer) throw new Error(`unexpected request ${method}`);
    return answer(params);
  }) as unknown as Request;
  return { request, calls };
}

export function fakeQuickPick() {
  const handlers: Record<string, (e: any) => void> = {};
  const pick: any = {
    items: [], value: "", busy: false, selectedItems: [], title: undefined,
    show: vi.fn(), hide: vi.fn(), dispose: vi.fn(),
    onDidChangeValue: (h: any) => (handlers.value = h, { dispose() {} }),
    onDidTriggerItemButton: (h: any) => (handlers.button = h, { dispose() {} }),
    onDidAccept: (h: any) => (handlers.accept = h, { dispose() {} }),
    onDidHide: (h: any) => (handlers.hide = h, { dispose() {} }),
  };
  (vscode.window.createQuickPick as any).mockReturnValue(pick);
  return { pick, handlers };
}

export function hit(id: string, content: string, extra: Partial<QueryHit> = {}): QueryHit {
  return {
    id, content, project: "/p", type: "decision", status: "active", trust: "candidate",
    validFrom: "2026-01-02T00:00:00Z", recordedAt: "2026-01-02T00:00:00Z", contentHash: "h", canonicalHash: "c",
    score: 0.5, sourceUri: "file:///p/plan.txt", sourceRange: "1:0-1:10", ...extra,
  };
}
