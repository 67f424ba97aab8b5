// The status bar: the active project's memory count and the models' state; a warning look
// and tooltip when the server runs degraded.
import * as vscode from "vscode";
import type { ServerState } from "./client";
import type { HealthResult, Request, StatsResult } from "./wire";

export interface StatusView {
  text: string;
  tooltip: string;
  warning: boolean;
}

/** Pure: what the item says for a state, the project's stats and the server's health. */
export function statusView(state: ServerState, folder: string | undefined, stats?: StatsResult,
                           health?: HealthResult, error?: string): StatusView {
  if (state === "failed") return { text: "$(error) memls", tooltip: "memls: the server is not running — see the output", warning: true };
  if (state !== "running") return { text: "$(sync~spin) memls", tooltip: `memls: ${state}`, warning: false };
  if (error) return { text: "$(warning) memls", tooltip: `memls: ${error}`, warning: true };
  const degraded = [...new Set([...(health?.degraded ?? []), ...(stats?.degraded ?? [])])];
  const models = degraded.length ? "degraded" : "models ok";
  const count = stats ? `${stats.memories}` : "–";
  const lines = [
    folder ? `memls — ${folder}` : "memls",
    stats ? `${stats.memories} memories · ${stats.reviewQueue} to review · ${stats.forgotten} forgotten` : "no project",
    health ? `models: ${Object.entries(health.models).map(([k, v]) => `${k} ${typeof v === "object" && v ? (v as Record<string, unknown>).state ?? JSON.stringify(v) : String(v)}`).join(", ") || "none"}` : "",
    health && health.indexPending ? `embedding: ${health.indexPending} pending` : "",
    degraded.length ? `DEGRADED: ${degraded.join("; ")}` : "",
  ].filter(Boolean);
  return {
    text: `${degraded.length ? "$(warning)" : "$(database)"} memls ${count} · ${models}`,
    tooltip: lines.join("\n"),
    warning: degraded.length > 0,
  };
}

export class StatusBar implements vscode.Disposable {
  readonly item: vscode.StatusBarItem;
  private timer: ReturnType<typeof setTimeout> | undefined;
  view: StatusView = { text: "memls", tooltip: "", warning: false };

  constructor(private readonly request: Request, private readonly state: () => ServerState,
              private readonly folder: () => vscode.WorkspaceFolder | undefined) {
    this.item = vscode.window.createStatusBarItem("memls.status", vscode.StatusBarAlignment.Left, 50);
    this.item.name = "memls";
    this.item.command = "memls.searchMemory";
    this.item.show();
  }

  /** Coalesce bursts of events into one update. */
  schedule(delay = 300): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.update(), delay);
  }

  async update(): Promise<StatusView> {
    const state = this.state();
    const folder = this.folder();
    let view: StatusView;
    if (state !== "running" || !folder) {
      view = statusView(state, folder?.name);
    } else {
      try {
        const [stats, health] = await Promise.all([
          this.request("memory/stats", { uri: folder.uri.toString() }),
          this.request("memory/health", {}),
        ]);
        view = statusView(state, folder.name, stats, health);
      } catch (err) {
        view = statusView(state, folder.name, undefined, undefined, err instanceof Error ? err.message : String(err));
      }
    }
    this.view = view;
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor = view.warning ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
    return view;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.item.dispose();
  }
}
