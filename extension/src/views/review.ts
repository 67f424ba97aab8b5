// The review queue: flagged memories (and candidates, folded) of each workspace folder, with
// approve / reject / restore inline, and "Cited code changed": memories whose cited code
// changed (re-confirm, edit, or forget as source_changed); refreshed on memory/changed.
import * as vscode from "vscode";
import { citationLines, describe, oneLine } from "../format";
import type { Memory, Request } from "../wire";

export type ReviewNode =
  | { kind: "folder"; folder: vscode.WorkspaceFolder }
  | { kind: "group"; folder: vscode.WorkspaceFolder; state: "flagged" | "candidate" | "changed"; memories: Memory[] }
  | { kind: "memory"; memory: Memory; changed?: boolean }
  | { kind: "message"; text: string };

export class ReviewTree implements vscode.TreeDataProvider<ReviewNode> {
  private readonly changed = new vscode.EventEmitter<ReviewNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly request: Request, private readonly folders: () => readonly vscode.WorkspaceFolder[]) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  async getChildren(node?: ReviewNode): Promise<ReviewNode[]> {
    const folders = this.folders();
    if (!node) {
      if (folders.length === 0) return [{ kind: "message", text: "Open a folder: memory is per project." }];
      if (folders.length > 1) return folders.map((folder) => ({ kind: "folder", folder }));
      return this.groups(folders[0]);
    }
    if (node.kind === "folder") return this.groups(node.folder);
    if (node.kind === "group") {
      return node.memories.map((memory) => ({ kind: "memory", memory, changed: node.state === "changed" }));
    }
    return [];
  }

  /** The flagged queue of one folder (what approving empties) and its candidates. */
  async groups(folder: vscode.WorkspaceFolder): Promise<ReviewNode[]> {
    try {
      const uri = folder.uri.toString();
      const [flagged, candidate] = await Promise.all([
        this.request("memory/review", { uri, action: "list", state: "flagged" }),
        this.request("memory/review", { uri, action: "list", state: "candidate" }),
      ]);
      return [
        { kind: "group", folder, state: "flagged", memories: flagged.memories ?? [] },
        { kind: "group", folder, state: "changed", memories: flagged.citedCodeChanged ?? [] },
        { kind: "group", folder, state: "candidate", memories: candidate.memories ?? [] },
      ];
    } catch (err) {
      return [{ kind: "message", text: `memls: ${err instanceof Error ? err.message : String(err)}` }];
    }
  }

  /** The flagged memories listed for a folder (what the tree shows under "Flagged"). */
  async flagged(folder: vscode.WorkspaceFolder): Promise<Memory[]> {
    const groups = await this.groups(folder);
    const g = groups.find((n) => n.kind === "group" && n.state === "flagged");
    return g && g.kind === "group" ? g.memories : [];
  }

  getTreeItem(node: ReviewNode): vscode.TreeItem {
    switch (node.kind) {
      case "folder": {
        const item = new vscode.TreeItem(node.folder.name, vscode.TreeItemCollapsibleState.Expanded);
        item.iconPath = new vscode.ThemeIcon("root-folder");
        return item;
      }
      case "group": {
        if (node.state === "changed") {
          const item = new vscode.TreeItem(`Cited code changed (${node.memories.length})`,
            node.memories.length ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
          item.iconPath = new vscode.ThemeIcon("diff");
          item.description = node.memories.length ? "re-confirm, edit or forget" : undefined;
          item.id = `review:${node.folder.uri.toString()}:changed`;
          return item;
        }
        const flagged = node.state === "flagged";
        const item = new vscode.TreeItem(
          `${flagged ? "Flagged" : "Candidates"} (${node.memories.length})`,
          node.memories.length === 0 ? vscode.TreeItemCollapsibleState.None
            : flagged ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
        item.iconPath = new vscode.ThemeIcon(flagged ? "warning" : "inbox");
        item.description = flagged ? (node.memories.length ? "needs review" : "queue empty") : undefined;
        item.id = `review:${node.folder.uri.toString()}:${node.state}`;
        return item;
      }
      case "memory": {
        const m = node.memory;
        const item = new vscode.TreeItem(oneLine(m.content, 80), vscode.TreeItemCollapsibleState.None);
        item.description = `${m.type} · score ${m.feedbackScore ?? 0}`;
        item.tooltip = new vscode.MarkdownString(`${m.content}\n\n*${describe(m)}*\n\n\`${m.id}\``
          + (m.sourceUri ? `\n\n${m.sourceUri}` : ""));
        item.contextValue = node.changed ? "memory.citedCodeChanged" : `memory.${m.trust}`;
        item.iconPath = new vscode.ThemeIcon(node.changed ? "diff" : m.trust === "flagged" ? "flag" : "circle-outline");
        item.id = `memory:${m.project}:${m.id}:${node.changed ? "changed" : m.trust}`;
        if (node.changed) {
          const lines = citationLines(m);
          item.description = lines.filter((l) => !l.endsWith(" fresh") && !l.endsWith(" moved")).join(", ");
          const fence = "```";
          item.tooltip = new vscode.MarkdownString(`${m.content}\n\n`
            + (m.citations ?? []).map((c) => `\`${c.path}:${c.startLine}-${c.endLine}\` ${c.state}`
              + (c.diff ? `\n\n${fence}diff\n${c.diff}\n${fence}` : "")).join("\n\n"));
        }
        if (m.sourceUri) {
          item.command = { command: "memls.openSource", title: "Open Source", arguments: [m.sourceUri, m.sourceRange] };
        }
        return item;
      }
      default:
        return new vscode.TreeItem(node.text);
    }
  }
}

/** approve / reject / restore a memory of the tree. */
export async function reviewAction(request: Request, action: "approve" | "reject" | "restore", node: ReviewNode | undefined) {
  if (!node || node.kind !== "memory") {
    void vscode.window.showWarningMessage(`memls: pick a memory in the Review Queue to ${action}.`);
    return undefined;
  }
  return request("memory/review", { project: node.memory.project, action, id: node.memory.id });
}

/** The Cited code changed group's actions: re-confirm (the citations take the code as it is
 * now), edit (a new text that supersedes the memory, citing the same code), forget. */
export async function citedCodeAction(request: Request, action: "reconfirm" | "edit" | "forget", node: ReviewNode | undefined) {
  if (!node || node.kind !== "memory") {
    void vscode.window.showWarningMessage(`memls: pick a memory under Cited code changed to ${action}.`);
    return undefined;
  }
  const m = node.memory;
  if (action === "reconfirm") return request("memory/reconfirm", { project: m.project, id: m.id });
  if (action === "forget") return request("memory/forget", { project: m.project, id: m.id, reason: "source_changed" });
  const text = await vscode.window.showInputBox({ prompt: "memls: the memory as it is true now", value: m.content });
  if (!text || !text.trim() || text.trim() === m.content.trim()) return undefined;
  const citations = (m.citations ?? []).filter((c) => c.state !== "missing").map((c) => (
    c.kind === "file" ? { path: c.path } : c.symbol ? { path: c.path, symbol: c.symbol }
      : { path: c.path, startLine: c.startLine, endLine: c.endLine }));
  const stored = await request("memory/store", { project: m.project, text: text.trim(), type: m.type, citations });
  return request("memory/supersede", { project: m.project, old: m.id, by: stored.id });
}
