// Remember Selection (or a typed line): pick a type, store with the file and range as source,
// and show the contradiction verdict when the server finds one, with Supersede / Keep both.
import * as vscode from "vscode";
import { formatRange, oneLine } from "../format";
import { pickFolder, relativeTo } from "../folders";
import { MEMORY_TYPES, type ConflictsNotification, type Request, type RememberType, type StoreResult } from "../wire";

export interface RememberArgs {
  /** Skip the type pick (keybindings, automation). */
  type?: RememberType;
  /** Store this text instead of the selection / a typed line. */
  text?: string;
}

const TYPE_HELP: Record<RememberType, string> = {
  decision: "a choice that was made",
  convention: "how things are done here",
  preference: "what someone prefers",
  fact: "something true about the project",
  lesson: "learned the hard way",
  note: "anything else",
};

/** Memories stored by this window whose contradiction check is still to come. */
const awaiting = new Map<string, { project: string; timer: ReturnType<typeof setTimeout> }>();
export const VERDICT_WAIT_MS = 60_000;

export async function rememberSelection(request: Request, args: RememberArgs = {}): Promise<StoreResult | undefined> {
  const editor = vscode.window.activeTextEditor;
  let text = args.text;
  let sourceUri: string | undefined;
  let sourceRange: string | undefined;
  let citation: { path: string; startLine: number; endLine: number } | undefined;
  let folder: vscode.WorkspaceFolder | undefined;
  if (text === undefined && editor && !editor.selection.isEmpty) {
    const s = editor.selection;
    text = editor.document.getText(s);
    if (editor.document.uri.scheme === "file" || editor.document.uri.scheme === "untitled") {
      sourceUri = editor.document.uri.toString();
      sourceRange = formatRange(s.start.line, s.start.character, s.end.line, s.end.character);
    }
  }
  folder = await pickFolder("Remember");
  if (!folder) return undefined;
  const path = editor && editor.document.uri.scheme === "file" ? relativeTo(folder, editor.document.uri) : undefined;
  if (editor && path && !editor.selection.isEmpty && args.text === undefined && !editor.document.isDirty) {
    // the selection is cited (the server adds the definition around it); saved text only
    const s = editor.selection;
    const last = s.end.character === 0 && s.end.line > s.start.line ? s.end.line - 1 : s.end.line;
    citation = { path, startLine: s.start.line + 1, endLine: last + 1 };
  }
  if (text === undefined) {
    text = await vscode.window.showInputBox({
      prompt: "memls: what should this project remember?",
      placeHolder: "We release from main every Friday",
      validateInput: (v) => (v.trim() ? undefined : "type the statement to remember"),
    });
  }
  if (!text || !text.trim()) return undefined;
  let type = args.type;
  if (!type) {
    const picked = await vscode.window.showQuickPick(
      MEMORY_TYPES.map((t) => ({ label: t, description: TYPE_HELP[t] })),
      { placeHolder: `Remember “${oneLine(text, 60)}” as…` });
    if (!picked) return undefined;
    type = picked.label;
  }
  const result = await request("memory/store", {
    uri: folder.uri.toString(), text: text.trim(), type,
    ...(sourceUri ? { sourceUri, sourceRange } : {}),
    ...(citation ? { citations: [citation] } : {}),
  });
  if (result.duplicate === "near") {
    void vscode.window.showInformationMessage(`memls: already remembered in other words (${result.id}).`);
  } else if (result.duplicate) {
    void vscode.window.showInformationMessage(`memls: already remembered (${result.id}).`);
  } else {
    expectVerdict(result.id, result.project);
    void vscode.window.showInformationMessage(`memls: remembered as ${type} (${result.id}) in ${folder.name}.`);
  }
  return result;
}

export function expectVerdict(id: string, project: string): void {
  const timer = setTimeout(() => awaiting.delete(id), VERDICT_WAIT_MS);
  awaiting.set(id, { project, timer });
}

/** memory/conflicts for a memory this window just stored: show the verdict with actions. */
export async function onConflicts(request: Request, n: ConflictsNotification): Promise<string | undefined> {
  const pending = awaiting.get(n.id);
  if (!pending || n.conflicts.length === 0) return undefined;
  clearTimeout(pending.timer);
  awaiting.delete(n.id);
  const c = n.conflicts[0];
  const other = c.newer.id === n.id ? c.older : c.newer;
  const choice = await vscode.window.showWarningMessage(
    `memls: this contradicts “${oneLine(other.content, 100)}” (confidence ${c.confidence.toFixed(2)}`
    + `${c.signals.length ? `, ${c.signals.map((s) => s.kind).join("+")}` : ""}).`,
    "Supersede", "Keep both");
  if (choice === "Supersede") {
    await request("memory/resolve", { project: n.project, a: c.newer.id, b: c.older.id, action: "supersede" });
  } else if (choice === "Keep both") {
    await request("memory/resolve", { project: n.project, a: c.newer.id, b: c.older.id, action: "dismiss" });
  }
  return choice;
}
