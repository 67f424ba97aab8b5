// memls in VS Code: the language client, commands, the review and conflicts views, the status
// bar, the language-model tools and the promote code action. Diagnostics and code actions for contradictions in notes
// come from the server through the client, as in Neovim and Emacs.
import * as vscode from "vscode";
import { MemlsClient } from "./client";
import { onConflicts, rememberSelection, type RememberArgs } from "./commands/remember";
import { searchMemory, type SearchArgs } from "./commands/search";
import { showForgotten, type ForgottenArgs } from "./commands/forgotten";
import { PromoteActions, promoteMemory, type PromoteArgs } from "./commands/promote";
import { openSource } from "./folders";
import { registerTools } from "./lmTools";
import { StatusBar } from "./status";
import { ConflictsTree, resolveConflict, type ConflictNode } from "./views/conflicts";
import { CitationLenses, openMemory, showCitingMemories } from "./views/citations";
import { ReviewTree, citedCodeAction, reviewAction, type ReviewNode } from "./views/review";
import type { Request } from "./wire";

export interface MemlsApi {
  client: MemlsClient;
  request: Request;
  review: ReviewTree;
  conflicts: ConflictsTree;
  lenses: CitationLenses;
  status: StatusBar;
  /** Resolves once the first start has been tried (true: the server runs). */
  started: Promise<boolean>;
}

function report<T>(fn: (...args: any[]) => Promise<T>) {
  return async (...args: any[]): Promise<T | undefined> => {
    try {
      return await fn(...args);
    } catch (err) {
      void vscode.window.showErrorMessage(`memls: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  };
}

export function activate(context: vscode.ExtensionContext): MemlsApi {
  const client = new MemlsClient();
  const request = client.request;
  const folders = () => vscode.workspace.workspaceFolders ?? [];
  const activeFolder = () => {
    const editor = vscode.window.activeTextEditor;
    return (editor && vscode.workspace.getWorkspaceFolder(editor.document.uri)) || folders()[0];
  };
  const review = new ReviewTree(request, folders);
  const conflicts = new ConflictsTree(request, folders);
  const lenses = new CitationLenses(request);
  const status = new StatusBar(request, () => client.state, activeFolder);
  const promotions = new PromoteActions(request);

  const refreshViews = () => {
    promotions.forget();
    review.refresh();
    lenses.refresh();
    conflicts.refresh();
    status.schedule();
  };
  let viewTimer: ReturnType<typeof setTimeout> | undefined;
  const refreshSoon = () => {
    if (viewTimer) clearTimeout(viewTimer);
    viewTimer = setTimeout(refreshViews, 250);
  };

  const command = (id: string, fn: (...args: any[]) => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, fn));

  command("memls.rememberSelection", report((args?: RememberArgs) => rememberSelection(request, args ?? {})));
  command("memls.searchMemory", report((args?: SearchArgs) => searchMemory(request, client.settings, args ?? {})));
  command("memls.promote", report(async (args?: PromoteArgs) => {
    const r = await promoteMemory(request, args ?? {});
    refreshViews();
    return r;
  }));
  command("memls.reviewQueue", () => vscode.commands.executeCommand("memls.review.focus"));
  command("memls.conflicts", () => vscode.commands.executeCommand("memls.conflicts.focus"));
  command("memls.forgotten", report((args?: ForgottenArgs) => showForgotten(request, args ?? {})));
  command("memls.restartServer", report(async () => {
    const ok = await client.restart();
    refreshViews();
    return ok;
  }));
  command("memls.showOutput", () => client.output.show(true));
  command("memls.refreshViews", refreshViews);
  command("memls.openSource", report((uri: string, range?: string) => openSource(uri, range)));
  for (const action of ["approve", "reject", "restore"] as const) {
    command(`memls.review.${action}`, report(async (node?: ReviewNode) => {
      const r = await reviewAction(request, action, node);
      refreshViews();
      return r;
    }));
  }
  const cited = { reconfirm: "reconfirm", edit: "edit", forgetChanged: "forget" } as const;
  for (const [name, how] of Object.entries(cited)) {
    command(`memls.review.${name}`, report(async (node?: ReviewNode) => {
      const r = await citedCodeAction(request, how, node);
      refreshViews();
      return r;
    }));
  }
  command("memls.showCitingMemories", report((ranges) => showCitingMemories(request, ranges)));
  command("memls.openMemory", report((id: string) => openMemory(request, id)));
  const resolutions = { supersedeOlder: "older", supersedeNewer: "newer", dismiss: "dismiss" } as const;
  for (const [name, how] of Object.entries(resolutions)) {
    command(`memls.conflict.${name}`, report(async (node?: ConflictNode) => {
      const r = await resolveConflict(request, how, node);
      refreshViews();
      return r;
    }));
  }

  context.subscriptions.push(
    client,
    status,
    vscode.window.createTreeView("memls.review", { treeDataProvider: review, showCollapseAll: true }),
    vscode.window.createTreeView("memls.conflicts", { treeDataProvider: conflicts }),
    vscode.languages.registerCodeLensProvider({ scheme: "file" }, lenses),
    vscode.languages.registerHoverProvider({ scheme: "file" }, lenses),
    vscode.languages.registerCodeActionsProvider({ scheme: "file" }, promotions, {
      providedCodeActionKinds: PromoteActions.kinds,
    }),
    client.on("memory/changed", refreshSoon),
    client.on("memory/conflicts", (n) => {
      refreshSoon();
      void onConflicts(request, n);
    }),
    client.onState(refreshSoon),
    vscode.window.onDidChangeActiveTextEditor(() => status.schedule(100)),
    vscode.workspace.onDidChangeWorkspaceFolders(refreshSoon),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("memls")) void client.settingsChanged().then(refreshSoon);
    }),
    ...registerTools(request, () => client.settings),
  );

  const started = client.start().then((ok) => {
    refreshViews();
    return ok;
  });
  return { client, request, review, conflicts, lenses, status, started };
}

export function deactivate(): Thenable<void> | undefined {
  return undefined;
}
