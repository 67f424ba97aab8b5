// The typed edge to the server: every memory/* request with its generated params and result.
// No `vscode` import here, so the contract test and the unit tests use it as is.
import type { Notifications, Requests } from "./generated/protocol";

export * from "./generated/protocol";

/** Which project a request is about: the server decides from `uri` (a workspace folder or a
 * document inside one) or takes an explicit `project`. Never neither in a multi-root window. */
export interface Scope {
  uri?: string;
  project?: string | null;
  /** Who inside the editor asks (the audit log names it as the front `lsp:<origin>`). */
  origin?: string;
}

export type Method = keyof Requests;
export type ParamsOf<M extends Method> = Requests[M]["params"] & Scope;
export type ResultOf<M extends Method> = Requests[M]["result"];

/** The one function every command, view and tool uses to reach the server. */
export type Request = <M extends Method>(method: M, params: ParamsOf<M>) => Promise<ResultOf<M>>;

export type NotificationMethod = keyof Notifications;
export type NotificationOf<N extends NotificationMethod> = Notifications[N];

export const MEMORY_TYPES = ["decision", "convention", "preference", "fact", "lesson", "note"] as const;
export type RememberType = (typeof MEMORY_TYPES)[number];
