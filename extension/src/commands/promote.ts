// Promote: write a memory into a note of its project (.memls/memory.md by default) so it
// travels with git to the team; the memory becomes that note's unit (memory/promote). Offered
// as a command (a quick pick of the folder's memories), on the Review Queue's items, and as a
// code action on the lines a memory comes from in a code file.
import * as vscode from "vscode";
import { oneLine } from "../format";
import { pickFolder } from "../folders";
import type { Memory, Request } from "../wire";

export const NOTE = ".memls/memory.md";

export interface PromoteArgs {
  id?: string;
  project?: string;
  /** A Review Queue node ({kind: "memory", memory}) when run from the tree. */
  memory?: Memory;
  to?: string;
}

/** A memory worth promoting: active, not flagged or rejected, not a note's unit already. */
export function promotable(m: Memory): boolean {
  return m.status === "active" && (m.trust === "candidate" || m.trust === "verified")
    && !(m.sourceUri ?? "").toLowerCase().endsWith(".md");
}

export async function promoteMemory(request: Request, args: PromoteArgs = {}) {
  let id = args.id ?? args.memory?.id;
  let project = args.project ?? args.memory?.project;
  if (!id) {
    const folder = await pickFolder();
    if (!folder) {
      void vscode.window.showWarningMessage("memls: open a folder: memory is per project.");
      return undefined;
    }
    const listed = await request("memory/list", { uri: folder.uri.toString(), status: "active", limit: 1000 });
    const items = (listed.memories ?? []).filter(promotable).map((m) => ({
      label: oneLine(m.content, 90), description: `${m.type} · ${m.trust}`, detail: m.id, memory: m,
    }));
    if (items.length === 0) {
      void vscode.window.showInformationMessage(`memls: no memory of ${folder.name} to promote.`);
      return undefined;
    }
    const picked = await vscode.window.showQuickPick(items, {
      title: `Promote a memory to ${NOTE} (shared through the repository)`, matchOnDetail: true,
    });
    if (!picked) return undefined;
    id = picked.memory.id;
    project = picked.memory.project;
  }
  const result = await request("memory/promote", { id, project, to: args.to ?? NOTE });
  const line = Number((result.sourceRange ?? "0").split(":")[0]);
  const open = "Open Note";
  const what = result.already ? "is already in" : "written to";
  void vscode.window.showInformationMessage(`memls: ${oneLine(result.memory.content, 60)} ${what} ${result.path}:${line + 1}`, open)
    .then(async (choice) => {
      if (choice !== open) return;
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(result.path));
      await vscode.window.showTextDocument(doc, { selection: new vscode.Range(line, 0, line, 0) });
    });
  return result;
}

/** The code action: on a line a memory comes from (its sourceUri and sourceRange), offer to
 *  share that memory through the repository. Memories are listed once per folder until the
 *  next memory/changed (`forget`). */
export class PromoteActions implements vscode.CodeActionProvider {
  static readonly kinds = [vscode.CodeActionKind.Refactor];
  private readonly cache = new Map<string, Promise<Memory[]>>();

  constructor(private readonly request: Request) {}

  forget(): void {
    this.cache.clear();
  }

  private memories(folder: vscode.WorkspaceFolder): Promise<Memory[]> {
    const key = folder.uri.toString();
    let found = this.cache.get(key);
    if (!found) {
      found = this.request("memory/list", { uri: key, status: "active", limit: 1000 })
        .then((r) => (r.memories ?? []).filter(promotable), () => []);
      this.cache.set(key, found);
    }
    return found;
  }

  async provideCodeActions(document: vscode.TextDocument, range: vscode.Range | vscode.Selection): Promise<vscode.CodeAction[]> {
    const folder = vscode.workspace.getWorkspaceFolder(document.uri);
    if (!folder) return [];
    const uri = document.uri.toString();
    const line = range.start.line;
    const here = (await this.memories(folder)).filter((m) => {
      if (!m.sourceUri || vscode.Uri.parse(m.sourceUri).toString() !== uri) return false;
      const [start, end] = (m.sourceRange ?? "").split("-").map((p) => Number(p.split(":")[0]));
      return Number.isFinite(start) && line >= start && line <= (Number.isFinite(end) ? end : start);
    });
    return here.map((m) => {
      const action = new vscode.CodeAction(`memls: Share “${oneLine(m.content, 50)}” through ${NOTE}`, vscode.CodeActionKind.Refactor);
      action.command = { command: "memls.promote", title: "Promote Memory", arguments: [{ id: m.id, project: m.project }] };
      return action;
    });
  }
}
