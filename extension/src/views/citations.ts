// Code to its memories: a CodeLens over each cited range ("memls: 2 memories", marked when the
// cited code changed) and a hover listing the first words of each; both from memory/citations
// and refreshed when the server announces memory/changed.
import * as vscode from "vscode";
import { lensTitle, oneLine } from "../format";
import type { CitedRange, Request } from "../wire";

export class CitationLenses implements vscode.CodeLensProvider, vscode.HoverProvider {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  private readonly cache = new Map<string, Promise<CitedRange[]>>();

  constructor(private readonly request: Request) {}

  refresh(): void {
    this.cache.clear();
    this.changed.fire();
  }

  /** The cited ranges of a document of a workspace folder (none for other documents). */
  ranges(document: vscode.TextDocument): Promise<CitedRange[]> {
    if (document.uri.scheme !== "file" || !vscode.workspace.getWorkspaceFolder(document.uri)) {
      return Promise.resolve([]);
    }
    const key = document.uri.toString();
    let found = this.cache.get(key);
    if (!found) {
      found = this.request("memory/citations", { uri: key }).then((r) => r.ranges, () => []);
      this.cache.set(key, found);
    }
    return found;
  }

  async provideCodeLenses(document: vscode.TextDocument): Promise<vscode.CodeLens[]> {
    const groups = new Map<string, CitedRange[]>();
    for (const r of await this.ranges(document)) {
      const key = `${r.startLine}-${r.endLine}`;
      groups.set(key, [...(groups.get(key) ?? []), r]);
    }
    return [...groups.values()].map((ranges) => {
      const line = Math.max(0, Math.min(ranges[0].startLine - 1, document.lineCount - 1));
      return new vscode.CodeLens(new vscode.Range(line, 0, line, 0), {
        title: lensTitle(ranges),
        command: "memls.showCitingMemories",
        arguments: [ranges],
      });
    });
  }

  async provideHover(document: vscode.TextDocument, position: vscode.Position): Promise<vscode.Hover | undefined> {
    const line = position.line + 1;
    const here = (await this.ranges(document)).filter((r) => r.startLine <= line && line <= r.endLine);
    if (here.length === 0) return undefined;
    const text = new vscode.MarkdownString(undefined, true);
    text.isTrusted = { enabledCommands: ["memls.openMemory"] };
    text.appendMarkdown(`**${lensTitle(here)}**\n\n`);
    for (const r of here) {
      const args = encodeURIComponent(JSON.stringify([r.memory]));
      text.appendMarkdown(`- [${escape(oneLine(r.preview, 80))}](command:memls.openMemory?${args})`
        + `${r.stale ? ` — *cited code ${r.state}*` : ""}\n`);
    }
    return new vscode.Hover(text);
  }
}

function escape(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, "\\$&");
}

/** The CodeLens's command: pick one of the memories citing the range and open it. */
export async function showCitingMemories(request: Request, ranges: CitedRange[]): Promise<string | undefined> {
  if (!ranges?.length) return undefined;
  const picked = ranges.length === 1 ? { range: ranges[0] } : await vscode.window.showQuickPick(
    ranges.map((range) => ({ label: oneLine(range.preview, 100), description: range.state, range })),
    { placeHolder: "memls: memories that cite this code" });
  if (!picked) return undefined;
  await openMemory(request, picked.range.memory);
  return picked.range.memory;
}

/** A memory in full, with the state of what it cites. */
export async function openMemory(request: Request, id: string): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const m = await request("memory/get", { id, ...(editor ? { uri: editor.document.uri.toString() } : {}) });
  const cites = (m.citations ?? []).map((c) => `${c.path}:${c.startLine}-${c.endLine} ${c.state}`
    + (c.diff ? `\n${c.diff}` : ""));
  void vscode.window.showInformationMessage(
    `${m.content}${m.stale ? "\n\nThe code it cites changed:" : ""}${cites.length ? `\n\n${cites.join("\n")}` : ""}`,
    { modal: true });
}
