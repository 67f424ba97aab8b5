// Open contradictions of each workspace folder: both statements, confidence, signals; resolve
// (supersede either way, not a contradiction); a click opens the note at the line.
import * as vscode from "vscode";
import { conflictDetail, conflictLabel, sideLabel, validity } from "../format";
import type { Conflict, Memory, Request } from "../wire";

export type ConflictNode =
  | { kind: "folder"; folder: vscode.WorkspaceFolder }
  | { kind: "conflict"; conflict: Conflict }
  | { kind: "side"; conflict: Conflict; memory: Memory; role: "newer" | "older" }
  | { kind: "message"; text: string };

export class ConflictsTree implements vscode.TreeDataProvider<ConflictNode> {
  private readonly changed = new vscode.EventEmitter<ConflictNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly request: Request, private readonly folders: () => readonly vscode.WorkspaceFolder[]) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  async getChildren(node?: ConflictNode): Promise<ConflictNode[]> {
    const folders = this.folders();
    if (!node) {
      if (folders.length === 0) return [{ kind: "message", text: "Open a folder: memory is per project." }];
      if (folders.length > 1) return folders.map((folder) => ({ kind: "folder", folder }));
      return this.conflicts(folders[0]);
    }
    if (node.kind === "folder") return this.conflicts(node.folder);
    if (node.kind === "conflict") {
      const c = node.conflict;
      return [{ kind: "side", conflict: c, memory: c.newer, role: "newer" },
        { kind: "side", conflict: c, memory: c.older, role: "older" }];
    }
    return [];
  }

  async conflicts(folder: vscode.WorkspaceFolder): Promise<ConflictNode[]> {
    try {
      const r = await this.request("memory/conflicts", { uri: folder.uri.toString(), status: "open" });
      if (r.conflicts.length === 0) return [{ kind: "message", text: "No open contradictions." }];
      return r.conflicts.map((conflict) => ({ kind: "conflict", conflict }));
    } catch (err) {
      return [{ kind: "message", text: `memls: ${err instanceof Error ? err.message : String(err)}` }];
    }
  }

  getTreeItem(node: ConflictNode): vscode.TreeItem {
    switch (node.kind) {
      case "folder": {
        const item = new vscode.TreeItem(node.folder.name, vscode.TreeItemCollapsibleState.Expanded);
        item.iconPath = new vscode.ThemeIcon("root-folder");
        return item;
      }
      case "conflict": {
        const c = node.conflict;
        const item = new vscode.TreeItem(conflictLabel(c), vscode.TreeItemCollapsibleState.Expanded);
        item.description = conflictDetail(c);
        item.tooltip = new vscode.MarkdownString(
          `**newer** (${validity(c.newer)}): ${c.newer.content}\n\n**older** (${validity(c.older)}): ${c.older.content}`
          + `\n\n${conflictDetail(c)}${c.proposal === "supersede" ? "\n\nThe newer statement says it replaces the older." : ""}`);
        item.contextValue = "conflict";
        item.iconPath = new vscode.ThemeIcon("warning");
        item.id = `conflict:${c.project}:${c.newer.id}:${c.older.id}`;
        const where = c.newer.sourceUri ? c.newer : c.older;
        if (where.sourceUri) {
          item.command = { command: "memls.openSource", title: "Open", arguments: [where.sourceUri, where.sourceRange] };
        }
        return item;
      }
      case "side": {
        const m = node.memory;
        const item = new vscode.TreeItem(sideLabel(node.conflict, node.role), vscode.TreeItemCollapsibleState.None);
        item.description = m.sourceUri ? vscode.workspace.asRelativePath(vscode.Uri.parse(m.sourceUri)) : "stored memory";
        item.iconPath = new vscode.ThemeIcon(node.role === "newer" ? "arrow-up" : "arrow-down");
        if (m.sourceUri) {
          item.command = { command: "memls.openSource", title: "Open", arguments: [m.sourceUri, m.sourceRange] };
        }
        return item;
      }
      default:
        return new vscode.TreeItem(node.text);
    }
  }
}

/** Resolve a contradiction: keep the newer (supersede the older), keep the older (supersede
 * the newer), or dismiss it as not a contradiction. */
export async function resolveConflict(request: Request, how: "older" | "newer" | "dismiss", node: ConflictNode | undefined) {
  if (!node || node.kind !== "conflict") {
    void vscode.window.showWarningMessage("memls: pick a contradiction in the Conflicts view.");
    return undefined;
  }
  const c = node.conflict;
  const pair = { project: c.project, a: c.newer.id, b: c.older.id };
  if (how === "older") return request("memory/resolve", { ...pair, action: "supersede" });
  if (how === "dismiss") return request("memory/resolve", { ...pair, action: "dismiss" });
  await request("memory/supersede", { project: c.project, old: c.newer.id, by: c.older.id });
  return request("memory/resolve", { ...pair, action: "resolve", note: "kept the older statement" });
}
