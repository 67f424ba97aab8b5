import { beforeEach, describe, expect, it, vi } from "vitest";
import * as vscode from "vscode";
import { MemlsClient } from "../src/client";

// The language client itself is not under test here: only what MemlsClient does around it.
const state = vi.hoisted(() => ({ started: [] as any[], failStart: undefined as Error | undefined }));
vi.mock("vscode-languageclient/node", () => ({
  CloseAction: { DoNotRestart: 1, Restart: 2 },
  ErrorAction: { Continue: 1, Shutdown: 2 },
  State: { Stopped: 1, Running: 2, Starting: 3 },
  TransportKind: { stdio: 0 },
  LanguageClient: class {
    options: any;
    constructor(_id: string, _name: string, public server: any, options: any) {
      this.options = options;
      state.started.push(this);
    }
    onDidChangeState() { return { dispose() {} }; }
    onNotification() { return { dispose() {} }; }
    async start() { if (state.failStart) throw state.failStart; }
    async stop() {}
    async dispose() {}
    sendRequest = vi.fn(async () => ({ ok: true }));
  },
}));


function output(): any {
  return { appendLine: vi.fn(), show: vi.fn(), dispose: vi.fn() };
}

function settings(values: Record<string, unknown>) {
  (vscode.workspace.getConfiguration as any).mockReturnValue({ get: (k: string, d: unknown) => (k in values ? values[k] : d) });
}

beforeEach(() => {
  vi.clearAllMocks();
  state.started.length = 0;
  state.failStart = undefined;
  (vscode.workspace as any).setWorkspaceFolders([]);
  (vscode.window.showErrorMessage as any).mockResolvedValue(undefined);
});

describe("starting the server", () => {
  it("says once, plainly, with the two ways out, when no server is found", async () => {
    settings({});
    const oldPath = process.env.PATH;
    process.env.PATH = "/nonexistent";
    try {
      const c = new MemlsClient(output());
      expect(await c.start()).toBe(false);
      expect(await c.start()).toBe(false);
      expect(c.state).toBe("failed");
    } finally {
      process.env.PATH = oldPath;
    }
    expect(vscode.window.showErrorMessage).toHaveBeenCalledTimes(1);
    const [message, ...buttons] = (vscode.window.showErrorMessage as any).mock.calls[0];
    expect(message).toContain("cannot find the memls server");
    expect(buttons).toEqual(["Open Setting", "Show Output"]);
  });

  it("Open Setting opens memls.server.command", async () => {
    settings({});
    (vscode.window.showErrorMessage as any).mockResolvedValue("Open Setting");
    const oldPath = process.env.PATH;
    process.env.PATH = "/nonexistent";
    try {
      await new MemlsClient(output()).start();
    } finally {
      process.env.PATH = oldPath;
    }
    expect(vscode.commands.executeCommand).toHaveBeenCalledWith("workbench.action.openSettings", "memls.server.command");
  });

  it("starts the configured command with the settings as initializationOptions; a start failure is said once", async () => {
    settings({ "server.command": ["/bin/true", "-x"], dataDir: "/data", rerank: false });
    state.failStart = new Error("spawn EACCES");
    const c = new MemlsClient(output());
    expect(await c.start()).toBe(false);
    const [client] = state.started;
    expect(client.server).toMatchObject({ command: "/bin/true", args: ["-x", "--data-dir", "/data", "serve", "--stdio"] });
    expect(client.server.options.env.MEMLS_RERANK).toBe("0");
    expect(client.options.initializationOptions).toMatchObject({ rerank: false, dataDir: "/data" });
    expect(client.options.synchronize.configurationSection).toBe("memls");
    expect((vscode.window.showErrorMessage as any).mock.calls[0][0]).toContain("spawn EACCES");
    await expect(c.request("memory/health", {})).rejects.toThrow(/not running/);
  });

  it("restarts a crashed server within the budget, then stops and says so once", async () => {
    settings({ "server.command": ["/bin/true"] });
    const c = new MemlsClient(output());
    expect(await c.start()).toBe(true);
    const handler = state.started[0].options.errorHandler;
    const actions = [];
    for (let i = 0; i < 6; i++) actions.push(handler.closed().action);
    expect(actions).toEqual([2, 2, 2, 2, 1, 1]);
    await new Promise((r) => setTimeout(r, 0));
    expect(vscode.window.showErrorMessage).toHaveBeenCalledTimes(1);
    expect((vscode.window.showErrorMessage as any).mock.calls[0][0]).toContain("left stopped");
  });
});
