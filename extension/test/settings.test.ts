import { describe, expect, it } from "vitest";
import manifest from "../package.json";
import { DEFAULTS, NOTE_BUFFERS, initializationOptions, needsRestart, queryOptions, readSettings, resolveLaunch } from "../src/settings";

const none = { isExecutable: () => false, pathEnv: "/usr/bin:/bin" };

describe("settings", () => {
  it("takes its defaults from package.json", () => {
    const props = manifest.contributes.configuration.properties;
    // which files are notes is the owner's to say: of `memls.notes.*`, only whether the agents'
    // own memories are read at all (an environment variable of the server's process)
    expect(Object.keys(props).filter((k) => k.startsWith("memls.notes."))).toEqual(["memls.notes.agentMemories"]);
    expect(DEFAULTS.agentMemories).toBe(true);
    expect(NOTE_BUFFERS).toEqual(manifest.memls.noteBuffers);
    expect(DEFAULTS.rerank).toBe(true);
    expect(DEFAULTS.interactiveDepth).toBe(props["memls.interactiveDepth"].default);
    expect(readSettings((_k, d) => d)).toEqual(DEFAULTS);
  });

  it("ignores values of the wrong kind (keeps the default)", () => {
    const s = readSettings((k, d) => (({ interactiveDepth: -1, "server.command": "memls" } as any)[k] ?? d));
    expect(s.interactiveDepth).toBe(DEFAULTS.interactiveDepth);
    expect(s.serverCommand).toEqual([]);
  });

  it("finds memls on PATH before the workspace's .venv", () => {
    const probe = { isExecutable: (f: string) => f === "/opt/bin/memls" || f === "/w/.venv/bin/memls", pathEnv: "/usr/bin:/opt/bin" };
    const launch = resolveLaunch(DEFAULTS, ["/w"], probe)!;
    expect(launch.command).toBe("/opt/bin/memls");
    expect(launch.args).toEqual(["serve", "--stdio"]);
    expect(launch.how).toBe("memls on PATH");
  });

  it("falls back to the workspace folder's .venv", () => {
    const probe = { isExecutable: (f: string) => f === "/b/.venv/bin/memls", pathEnv: "/usr/bin" };
    expect(resolveLaunch(DEFAULTS, ["/a", "/b"], probe)!.command).toBe("/b/.venv/bin/memls");
  });

  it("gives nothing when no server is found (the caller says so)", () => {
    expect(resolveLaunch(DEFAULTS, ["/a"], none)).toBeUndefined();
  });

  it("passes the data directory, re-ranking and Chroma to the process", () => {
    const s = { ...DEFAULTS, serverCommand: ["/x/python", "-m", "memls"], dataDir: "/d", rerank: false, chromaUrl: "http://c:8000" };
    const launch = resolveLaunch(s, [], none)!;
    expect(launch.command).toBe("/x/python");
    expect(launch.args).toEqual(["-m", "memls", "--data-dir", "/d", "serve", "--stdio"]);
    expect(launch.env).toEqual({ MEMLS_RERANK: "0", MEMLS_CHROMA_URL: "http://c:8000" });
    const off = resolveLaunch({ ...s, agentMemories: false }, [], none)!;
    expect(off.env.MEMLS_AGENT_MEMORIES).toBe("0");
  });

  it("sends every setting at initialize; which files are notes is the server's to say", () => {
    const o = initializationOptions(DEFAULTS);
    expect(o).not.toHaveProperty("notes");
    expect(o).toMatchObject({ rerank: true, interactiveDepth: 0, chromaUrl: null, dataDir: null });
  });

  it("restarts the server only for settings a process must be started with", () => {
    expect(needsRestart(DEFAULTS, { ...DEFAULTS, interactiveDepth: 9 })).toBe(false);
    expect(needsRestart(DEFAULTS, { ...DEFAULTS, dataDir: "/d" })).toBe(true);
    expect(needsRestart(DEFAULTS, { ...DEFAULTS, rerank: false })).toBe(true);
    expect(needsRestart(DEFAULTS, { ...DEFAULTS, agentMemories: false })).toBe(true);
  });

  it("interactive queries carry the interactive depth; re-ranking off is said per query", () => {
    expect(queryOptions(DEFAULTS, true)).toEqual({ mode: "interactive", depth: "interactive", rerankDepth: 0 });
    expect(queryOptions({ ...DEFAULTS, rerank: false }, false)).toEqual({ rerank: false });
  });
});
