// Forgotten: the forgetting log, filtered by a reason from the server's vocabulary.
import * as vscode from "vscode";
import { oneLine } from "../format";
import { pickFolder } from "../folders";
import { FORGET_REASONS, type ForgottenResult, type Request } from "../wire";

export interface ForgottenArgs {
  /** "all" or one reason: skips the filter pick. */
  reason?: string;
}

export async function showForgotten(request: Request, args: ForgottenArgs = {}): Promise<ForgottenResult | undefined> {
  const folder = await pickFolder("Forgotten");
  if (!folder) return undefined;
  let reason = args.reason;
  if (!reason) {
    const picked = await vscode.window.showQuickPick(
      [{ label: "all", description: "every reason" }, ...FORGET_REASONS.map((r) => ({ label: r }))],
      { placeHolder: "Forgotten memories: which reason?" });
    if (!picked) return undefined;
    reason = picked.label;
  }
  if (reason !== "all" && !(FORGET_REASONS as readonly string[]).includes(reason)) {
    void vscode.window.showErrorMessage(`memls: unknown reason ${reason}; known: ${FORGET_REASONS.join(", ")}`);
    return undefined;
  }
  const result = await request("memory/forgotten", {
    uri: folder.uri.toString(), limit: 200,
    ...(reason === "all" ? {} : { reason: reason as (typeof FORGET_REASONS)[number] }),
  });
  const items = result.entries.map((e) => ({
    label: oneLine(e.preview, 100),
    description: `${e.reason} · ${e.type} · ${e.at.slice(0, 19).replace("T", " ")} · by ${e.front}`,
    detail: e.memoryId,
  }));
  if (items.length === 0) {
    void vscode.window.showInformationMessage(
      `memls: nothing forgotten in ${folder.name}${reason === "all" ? "" : ` for ${reason}`}.`);
  } else {
    void vscode.window.showQuickPick(items, { placeHolder: `Forgotten in ${folder.name} (${reason})`, matchOnDescription: true });
  }
  return result;
}
