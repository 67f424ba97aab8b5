// Settings: the extension's defaults are package.json's (so they cannot drift from what the
// user sees), and how they reach the server: the command line (data directory), the
// environment (re-ranking, Chroma, the agents' own memories), initializationOptions and
// workspace/didChangeConfiguration.
import * as path from "node:path";
import manifest from "../package.json";

type Props = typeof manifest.contributes.configuration.properties;

export interface MemlsSettings {
  serverCommand: string[];
  agentMemories: boolean;
  rerank: boolean;
  chromaUrl: string;
  dataDir: string;
  interactiveDepth: number;
}

const props: Props = manifest.contributes.configuration.properties;

export const DEFAULTS: MemlsSettings = {
  serverCommand: [...props["memls.server.command"].default],
  agentMemories: props["memls.notes.agentMemories"].default,
  rerank: props["memls.rerank"].default,
  chromaUrl: props["memls.chromaUrl"].default,
  dataDir: props["memls.dataDir"].default,
  interactiveDepth: props["memls.interactiveDepth"].default,
};

/** Reads `memls.*` through a getter (vscode's WorkspaceConfiguration.get, or a stub). */
export function readSettings(get: <T>(key: string, fallback: T) => T): MemlsSettings {
  const list = (v: unknown, d: string[]) =>
    Array.isArray(v) && v.every((x) => typeof x === "string") ? (v as string[]) : d;
  const depth = Number(get("interactiveDepth", DEFAULTS.interactiveDepth));
  return {
    serverCommand: list(get("server.command", DEFAULTS.serverCommand), DEFAULTS.serverCommand),
    agentMemories: get("notes.agentMemories", DEFAULTS.agentMemories) !== false,
    rerank: get("rerank", DEFAULTS.rerank) !== false,
    chromaUrl: String(get("chromaUrl", DEFAULTS.chromaUrl) ?? "").trim(),
    dataDir: String(get("dataDir", DEFAULTS.dataDir) ?? "").trim(),
    interactiveDepth: Number.isInteger(depth) && depth >= 0 && depth <= 200
      ? depth : DEFAULTS.interactiveDepth,
  };
}

/** The buffers the editor relays to the server (package.json's `memls.noteBuffers`): every
 * file an agent's convention can name. Which of them are notes, of which kind and scope, the
 * server says (the owner's table of the agents' conventions), not the editor. */
export const NOTE_BUFFERS: readonly string[] = manifest.memls.noteBuffers;

/** What the server gets at initialize (and, as the `memls` section, on every change). */
export function initializationOptions(s: MemlsSettings) {
  return {
    rerank: s.rerank,
    interactiveDepth: s.interactiveDepth,
    chromaUrl: s.chromaUrl || null,
    dataDir: s.dataDir || null,
  };
}

/** Settings that only a new server process can take (its command line and environment). */
export function needsRestart(a: MemlsSettings, b: MemlsSettings): boolean {
  return JSON.stringify([a.serverCommand, a.dataDir, a.chromaUrl, a.rerank, a.agentMemories])
    !== JSON.stringify([b.serverCommand, b.dataDir, b.chromaUrl, b.rerank, b.agentMemories]);
}

export interface Launch {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Where it was found, for the output channel. */
  how: string;
}

export interface Probe {
  /** Is this an executable file? */
  isExecutable(file: string): boolean;
  /** $PATH */
  pathEnv: string | undefined;
}

/** The server's command: the setting, else `memls` on PATH, else a workspace folder's
 * `.venv/bin/memls`. Undefined when none is there (the caller says so, once). */
export function resolveLaunch(s: MemlsSettings, folders: string[], probe: Probe): Launch | undefined {
  let command: string | undefined;
  let pre: string[] = [];
  let how = "";
  if (s.serverCommand.length > 0) {
    [command, ...pre] = s.serverCommand;
    how = "the memls.server.command setting";
  } else {
    for (const dir of (probe.pathEnv ?? "").split(path.delimiter).filter(Boolean)) {
      const candidate = path.join(dir, "memls");
      if (probe.isExecutable(candidate)) {
        command = candidate;
        how = "memls on PATH";
        break;
      }
    }
    if (!command) {
      for (const folder of folders) {
        const candidate = path.join(folder, ".venv", "bin", "memls");
        if (probe.isExecutable(candidate)) {
          command = candidate;
          how = `the workspace's .venv (${folder})`;
          break;
        }
      }
    }
  }
  if (!command) return undefined;
  const args = [...pre];
  if (s.dataDir) args.push("--data-dir", s.dataDir);
  args.push("serve", "--stdio");
  const env: Record<string, string> = {};
  if (!s.rerank) env.MEMLS_RERANK = "0";
  if (s.chromaUrl) env.MEMLS_CHROMA_URL = s.chromaUrl;
  if (!s.agentMemories) env.MEMLS_AGENT_MEMORIES = "0";
  return { command, args, env, how };
}

/** Query params that carry the settings a request can say itself. */
export function queryOptions(s: MemlsSettings, interactive: boolean) {
  return {
    ...(s.rerank ? {} : { rerank: false }),
    ...(interactive
      ? { mode: "interactive" as const, depth: "interactive" as const, rerankDepth: s.interactiveDepth }
      : {}),
  };
}
