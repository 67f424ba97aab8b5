// The language client: starts `memls serve --stdio`, keeps a restart budget, says plainly
// (once) when the server cannot start, and hands a typed `request` to everything else.
import * as fs from "node:fs";
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  State,
  TransportKind,
} from "vscode-languageclient/node";
import { RestartBudget } from "./budget";
import {
  initializationOptions,
  NOTE_BUFFERS,
  type Launch,
  type MemlsSettings,
  needsRestart,
  readSettings,
  resolveLaunch,
} from "./settings";
import type { NotificationMethod, NotificationOf, Request } from "./wire";

export type ServerState = "starting" | "running" | "stopped" | "failed";

export function currentSettings(): MemlsSettings {
  const config = vscode.workspace.getConfiguration("memls");
  return readSettings((key, fallback) => config.get(key, fallback));
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

export class MemlsClient implements vscode.Disposable {
  client: LanguageClient | undefined;
  readonly output: vscode.LogOutputChannel;
  settings: MemlsSettings = currentSettings();
  state: ServerState = "stopped";
  /** How the running server's command was found (for the output and the tests). */
  launch: Launch | undefined;
  private readonly budget = new RestartBudget();
  private failureShown = false;
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  readonly onState = this.stateEmitter.event;
  private readonly listeners = new Map<string, Set<(p: unknown) => void>>();
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(output?: vscode.LogOutputChannel) {
    this.output = output ?? vscode.window.createOutputChannel("memls", { log: true });
  }

  private setState(state: ServerState): void {
    this.state = state;
    this.stateEmitter.fire(state);
  }

  /** Listen to a server notification (kept across restarts). */
  on<N extends NotificationMethod>(method: N, handler: (p: NotificationOf<N>) => void): vscode.Disposable {
    let set = this.listeners.get(method);
    if (!set) {
      set = new Set();
      this.listeners.set(method, set);
      this.client?.onNotification(method, (p: unknown) => this.dispatch(method, p));
    }
    set.add(handler as (p: unknown) => void);
    return new vscode.Disposable(() => set!.delete(handler as (p: unknown) => void));
  }

  private dispatch(method: string, payload: unknown): void {
    for (const handler of this.listeners.get(method) ?? []) {
      try {
        handler(payload);
      } catch (err) {
        this.output.appendLine(`memls: a ${method} listener failed: ${String(err)}`);
      }
    }
  }

  readonly request: Request = async (method, params) => {
    const client = this.client;
    if (!client || this.state !== "running") {
      throw new Error(`the memls server is ${this.state === "failed" ? "not running (it failed to start)" : this.state}`);
    }
    return client.sendRequest(method, params);
  };

  /** Say it once (until a start succeeds), with the two ways out. */
  private async fail(message: string): Promise<void> {
    this.setState("failed");
    this.output.appendLine(`memls: ${message}`);
    if (this.failureShown) return;
    this.failureShown = true;
    const choice = await vscode.window.showErrorMessage(`memls: ${message}`, "Open Setting", "Show Output");
    if (choice === "Open Setting") {
      await vscode.commands.executeCommand("workbench.action.openSettings", "memls.server.command");
    } else if (choice === "Show Output") {
      this.output.show(true);
    }
  }

  async start(): Promise<boolean> {
    if (this.client) return this.state === "running";
    this.settings = currentSettings();
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    const launch = resolveLaunch(this.settings, folders, { isExecutable, pathEnv: process.env.PATH });
    if (!launch) {
      await this.fail("cannot find the memls server: no memls.server.command, no `memls` on PATH, "
        + "no .venv/bin/memls in a workspace folder. Install memls or set memls.server.command.");
      return false;
    }
    return this.startWith(launch);
  }

  private async startWith(launch: Launch): Promise<boolean> {
    this.setState("starting");
    this.launch = launch;
    this.output.appendLine(`memls: starting ${launch.command} ${launch.args.join(" ")} (${launch.how})`);
    const serverOptions: ServerOptions = {
      command: launch.command,
      args: launch.args,
      transport: TransportKind.stdio,
      options: { env: { ...process.env, ...launch.env } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: NOTE_BUFFERS.map((pattern) => ({ scheme: "file", pattern })),
      initializationOptions: initializationOptions(this.settings),
      synchronize: { configurationSection: "memls" },
      outputChannel: this.output,
      initializationFailedHandler: (error) => {
        void this.fail(`the server failed to initialize: ${String(error)}`);
        return false;
      },
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue, handled: true }),
        closed: () => {
          if (this.budget.take()) {
            this.output.appendLine("memls: the server stopped; restarting it");
            return { action: CloseAction.Restart, handled: true };
          }
          void this.fail("the server stopped 4 times in 3 minutes and is left stopped. "
            + "See the output; run “memls: Restart Server” when it is fixed.");
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
    };
    const client = new LanguageClient("memls", "memls", serverOptions, clientOptions);
    this.client = client;
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) {
        this.failureShown = false;
        this.setState("running");
      } else if (e.newState === State.Stopped && this.state !== "failed") {
        this.setState("stopped");
      }
    });
    for (const method of this.listeners.keys()) {
      client.onNotification(method, (p: unknown) => this.dispatch(method, p));
    }
    try {
      await client.start();
      this.setState("running");
      return true;
    } catch (err) {
      this.client = undefined;
      await client.dispose().catch(() => undefined);
      await this.fail(`the server could not start (${launch.command}): ${err instanceof Error ? err.message : String(err)}`);
      return false;
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(5000);
      } catch (err) {
        this.output.appendLine(`memls: stopping the server: ${String(err)}`);
      }
      await client.dispose().catch(() => undefined);
    }
    this.setState("stopped");
  }

  async restart(): Promise<boolean> {
    await this.stop();
    this.budget.reset();
    this.failureShown = false;
    return this.start();
  }

  /** A settings change: the server command, data directory, Chroma URL and re-ranking need a
   * new process; the rest reaches the running server (workspace/didChangeConfiguration). */
  async settingsChanged(): Promise<void> {
    const next = currentSettings();
    const restart = needsRestart(this.settings, next);
    this.settings = next;
    if (restart && this.client) await this.restart();
  }

  dispose(): void {
    void this.stop();
    this.subscriptions.forEach((d) => d.dispose());
    this.stateEmitter.dispose();
  }
}
