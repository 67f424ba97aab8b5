// Search Memory: a QuickPick with live results as you type (debounced, interactive depth),
// each item showing type, trust and validity; buttons open the source, give feedback, explain
// the score, and forget with a reason from the server's vocabulary.
import * as vscode from "vscode";
import { describe, explainText, oneLine } from "../format";
import { openSource, pickFolder, relativeTo } from "../folders";
import { queryOptions, type MemlsSettings } from "../settings";
import { FORGET_REASONS, type QueryHit, type QueryResult, type Request } from "../wire";

export const DEBOUNCE_MS = 200;

export interface SearchArgs {
  /** Start with this query (the results appear as if typed). */
  query?: string;
}

export interface HitItem extends vscode.QuickPickItem {
  hit: QueryHit;
  explained: boolean;
}

export const BUTTONS = {
  open: { iconPath: new vscode.ThemeIcon("go-to-file"), tooltip: "Open the source" },
  explain: { iconPath: new vscode.ThemeIcon("info"), tooltip: "Explain the score" },
  helpful: { iconPath: new vscode.ThemeIcon("thumbsup"), tooltip: "Helpful" },
  unhelpful: { iconPath: new vscode.ThemeIcon("thumbsdown"), tooltip: "Unhelpful" },
  outdated: { iconPath: new vscode.ThemeIcon("history"), tooltip: "Outdated" },
  forget: { iconPath: new vscode.ThemeIcon("trash"), tooltip: "Forget…" },
};

export function toItem(hit: QueryHit, explained = false): HitItem {
  return {
    label: oneLine(hit.content, 100),
    description: describe(hit),
    detail: explained ? explainText(hit.score, hit.explain) : (hit.sourceUri ? `${hit.sourceUri}` : undefined),
    alwaysShow: true, // the server ranks; VS Code's fuzzy filter must not hide results
    buttons: [...(hit.sourceUri ? [BUTTONS.open] : []), BUTTONS.explain, BUTTONS.helpful,
      BUTTONS.unhelpful, BUTTONS.outdated, BUTTONS.forget],
    hit,
    explained,
  };
}

/** A search session: the QuickPick, its debounced queries, and what each button does. */
export class Search {
  readonly pick: vscode.QuickPick<HitItem>;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private generation = 0;
  private lastQuery = "";
  private current = "";
  /** Resolves with each shown result set (the latest query's only). */
  private readonly shown = new vscode.EventEmitter<QueryResult>();
  readonly onDidShow = this.shown.event;

  constructor(private readonly request: Request, private readonly folder: vscode.WorkspaceFolder,
              private readonly settings: MemlsSettings) {
    this.pick = vscode.window.createQuickPick<HitItem>();
    this.pick.placeholder = `Search ${folder.name}'s memory (type to search)`;
    this.pick.matchOnDescription = false;
    this.pick.matchOnDetail = false;
    this.pick.onDidChangeValue((v) => this.schedule(v));
    this.pick.onDidTriggerItemButton((e) => void this.button(e.item, e.button));
    this.pick.onDidAccept(() => void this.accept());
    this.pick.onDidHide(() => this.dispose());
  }

  schedule(value: string): void {
    if (this.timer) clearTimeout(this.timer);
    if (value.trim() === this.current) return; // already asked (a value set by the command)
    this.timer = setTimeout(() => void this.run(value), DEBOUNCE_MS);
  }

  async run(value: string): Promise<QueryResult | undefined> {
    const query = value.trim();
    const generation = ++this.generation;
    this.current = query;
    if (!query) {
      this.pick.items = [];
      return undefined;
    }
    this.pick.busy = true;
    try {
      const result = await this.request("memory/query", {
        uri: this.folder.uri.toString(), query, k: 20, explain: true, paths: activePaths(this.folder),
        ...queryOptions(this.settings, true),
      });
      if (generation !== this.generation) return undefined; // a newer query is under way
      this.lastQuery = query;
      this.pick.items = result.results.map((h) => toItem(h));
      this.pick.title = result.degraded?.length ? `memls (degraded: ${result.degraded.join("; ")})` : undefined;
      this.shown.fire(result);
      return result;
    } catch (err) {
      if (generation === this.generation) {
        this.pick.items = [];
        this.pick.title = `memls: ${err instanceof Error ? err.message : String(err)}`;
      }
      return undefined;
    } finally {
      if (generation === this.generation) this.pick.busy = false;
    }
  }

  async button(item: HitItem, button: vscode.QuickInputButton): Promise<void> {
    const { hit } = item;
    const project = hit.project;
    try {
      if (button === BUTTONS.open) {
        await openSource(hit.sourceUri, hit.sourceRange);
      } else if (button === BUTTONS.explain) {
        this.replace(item, toItem(hit, !item.explained));
      } else if (button === BUTTONS.helpful || button === BUTTONS.unhelpful || button === BUTTONS.outdated) {
        const signal = button === BUTTONS.helpful ? "helpful" : button === BUTTONS.unhelpful ? "unhelpful" : "outdated";
        const r = await this.request("memory/feedback", { project, id: hit.id, signal, query: this.lastQuery || null });
        this.replace(item, toItem({ ...hit, trust: r.trust, feedbackScore: r.score }, item.explained));
        void vscode.window.showInformationMessage(
          `memls: ${signal} — score ${r.score}, trust ${r.trust}${r.transition ? ` (was ${r.transition.fromTrust})` : ""}.`);
      } else if (button === BUTTONS.forget) {
        const reason = await pickForgetReason();
        if (!reason) return;
        await this.request("memory/forget", { project, id: hit.id, reason });
        this.pick.items = this.pick.items.filter((i) => i.hit.id !== hit.id);
        void vscode.window.showInformationMessage(`memls: forgotten (${reason}).`);
      }
    } catch (err) {
      void vscode.window.showErrorMessage(`memls: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private replace(old: HitItem, next: HitItem): void {
    this.pick.items = this.pick.items.map((i) => (i === old ? next : i));
  }

  async accept(): Promise<void> {
    const item = this.pick.selectedItems[0];
    if (!item) return;
    if (await openSource(item.hit.sourceUri, item.hit.sourceRange)) {
      this.pick.hide();
    } else {
      void vscode.window.showInformationMessage(`${item.hit.content}\n\n${describe(item.hit)}`, { modal: true });
    }
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.shown.dispose();
    this.pick.dispose();
  }
}

/** The active editor's file, relative to the folder: memories that cite it rank first. */
export function activePaths(folder: vscode.WorkspaceFolder): string[] {
  const doc = vscode.window.activeTextEditor?.document;
  if (!doc || doc.uri.scheme !== "file") return [];
  const path = relativeTo(folder, doc.uri);
  return path ? [path] : [];
}

export async function pickForgetReason(): Promise<(typeof FORGET_REASONS)[number] | undefined> {
  const picked = await vscode.window.showQuickPick(
    FORGET_REASONS.map((r) => ({ label: r })), { placeHolder: "Why forget it?" });
  return picked?.label as (typeof FORGET_REASONS)[number] | undefined;
}

/** The command. With `query`, returns the first result set once shown (the pick stays open). */
export async function searchMemory(request: Request, settings: MemlsSettings, args: SearchArgs = {}):
  Promise<QueryResult | undefined> {
  const folder = await pickFolder("Search Memory");
  if (!folder) return undefined;
  const search = new Search(request, folder, settings);
  search.pick.show();
  if (args.query) {
    search.pick.value = args.query;
    return search.run(args.query);
  }
  return undefined;
}
