// Which project a command acts on: the active editor's workspace folder, else the one folder,
// else the user picks. Never "no project".
import * as vscode from "vscode";

export async function pickFolder(purpose = "memls"): Promise<vscode.WorkspaceFolder | undefined> {
  const editor = vscode.window.activeTextEditor;
  if (editor) {
    const folder = vscode.workspace.getWorkspaceFolder(editor.document.uri);
    if (folder) return folder;
  }
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (folders.length === 0) {
    void vscode.window.showWarningMessage(
      "memls keeps memory per project (workspace folder): open a folder first.");
    return undefined;
  }
  if (folders.length === 1) return folders[0];
  return vscode.window.showWorkspaceFolderPick({ placeHolder: `${purpose}: which folder's project?` });
}

/** A folder named by a tool's input (name or path), else the editor's, else the only one. */
export function folderFor(hint: string | undefined): vscode.WorkspaceFolder {
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (hint) {
    const found = folders.find((f) => f.name === hint || f.uri.fsPath === hint || f.uri.toString() === hint);
    if (!found) {
      throw new Error(`no workspace folder named ${JSON.stringify(hint)}; folders: ${folders.map((f) => f.name).join(", ") || "none"}`);
    }
    return found;
  }
  const editor = vscode.window.activeTextEditor;
  const own = editor && vscode.workspace.getWorkspaceFolder(editor.document.uri);
  if (own) return own;
  if (folders.length === 1) return folders[0];
  if (folders.length === 0) throw new Error("no workspace folder is open: memls memory is per project");
  throw new Error(`the workspace has ${folders.length} folders: name one in \`folder\` (${folders.map((f) => f.name).join(", ")})`);
}

export async function openSource(sourceUri: string | null | undefined, range: string | null | undefined): Promise<boolean> {
  if (!sourceUri) return false;
  const uri = vscode.Uri.parse(sourceUri);
  const m = /^(\d+):(\d+)-(\d+):(\d+)$/.exec(range ?? "");
  const selection = m
    ? new vscode.Range(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]))
    : undefined;
  await vscode.window.showTextDocument(uri, { selection, preview: true });
  return true;
}

/** `uri`'s path relative to `folder` ("src/a.py"), or undefined when it is not inside it. */
export function relativeTo(folder: vscode.WorkspaceFolder, uri: vscode.Uri): string | undefined {
  const base = folder.uri.path.replace(/\/+$/, "");
  return uri.path.startsWith(base + "/") ? uri.path.slice(base.length + 1) : undefined;
}
