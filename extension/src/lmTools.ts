// Language-model tools: agents in VS Code read and write the same project memory through the
// same daemon. Results carry provenance and are fenced as recalled data, never instructions;
// a store names its origin (the tool) in the audit log.
import * as vscode from "vscode";
import { provenance, recalledBlock } from "./format";
import { folderFor } from "./folders";
import { queryOptions, type MemlsSettings } from "./settings";
import { MEMORY_TYPES, type Request, type RememberType } from "./wire";

export const QUERY_TOOL = "memls_query";
export const REMEMBER_TOOL = "memls_remember";
/** The origin a tool's store names in the audit log (the front is `lsp:<origin>`). */
export const TOOL_ORIGIN = "vscode-lm-tool";

export interface QueryInput { query: string; k?: number; folder?: string }
export interface CitationInput { path: string; startLine?: number; endLine?: number; symbol?: string }
export interface RememberInput { text: string; type?: RememberType; folder?: string; citations?: CitationInput[] }

export async function runQuery(request: Request, settings: MemlsSettings, input: QueryInput): Promise<string> {
  if (!input || typeof input.query !== "string" || !input.query.trim()) throw new Error("query: a non-empty string is required");
  const folder = folderFor(input.folder);
  const k = Number.isInteger(input.k) && input.k! >= 1 && input.k! <= 50 ? input.k! : 5;
  const r = await request("memory/query", { uri: folder.uri.toString(), query: input.query, k, ...queryOptions(settings, false) });
  return recalledBlock(r.project, input.query, r.results, r.degraded);
}

export async function runRemember(request: Request, input: RememberInput): Promise<string> {
  if (!input || typeof input.text !== "string" || !input.text.trim()) throw new Error("text: a non-empty string is required");
  const type = input.type ?? "note";
  if (!(MEMORY_TYPES as readonly string[]).includes(type)) throw new Error(`type: one of ${MEMORY_TYPES.join(", ")}`);
  const folder = folderFor(input.folder);
  const r = await request("memory/store", {
    uri: folder.uri.toString(), text: input.text.trim(), type, origin: TOOL_ORIGIN,
    ...(Array.isArray(input.citations) && input.citations.length ? { citations: input.citations } : {}),
  });
  return [
    r.duplicate === "near"
      ? `already remembered in other words: ${r.id} (nothing new stored)`
      : r.duplicate ? `already remembered: ${r.id}` : `remembered: ${r.id}`,
    `project: ${r.project}`,
    JSON.stringify(provenance(r.memory)),
    ...(r.memory.citations ?? []).map((c) => `cites ${c.path}:${c.startLine}-${c.endLine} (${c.state})`),
    "A contradiction with an existing memory, if any, is reported to the user by memls.",
  ].join("\n");
}

function result(text: string): vscode.LanguageModelToolResult {
  return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(text)]);
}

export function registerTools(request: Request, settings: () => MemlsSettings): vscode.Disposable[] {
  if (!vscode.lm || typeof vscode.lm.registerTool !== "function") return [];
  return [
    vscode.lm.registerTool<QueryInput>(QUERY_TOOL, {
      prepareInvocation: (options) => ({ invocationMessage: `Searching project memory for “${options.input.query}”` }),
      invoke: async (options) => result(await runQuery(request, settings(), options.input)),
    }),
    vscode.lm.registerTool<RememberInput>(REMEMBER_TOOL, {
      // VS Code asks the user before a chat runs an extension's tool (unless they auto-approve
      // it); the message says what will be stored.
      prepareInvocation: (options) => ({
        invocationMessage: `Remembering (${options.input.type ?? "note"}): ${options.input.text}`,
      }),
      invoke: async (options) => result(await runRemember(request, options.input)),
    }),
  ];
}
