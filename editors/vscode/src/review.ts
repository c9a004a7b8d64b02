/**
 * Review mode: each patch waits for the user. The diff editor shows each
 * file as it is now and as the patch would leave it; a notification beside
 * it asks Accept or Reject, and a rejection may carry a reason the agent
 * reads. Dismissing the question rejects: nothing changes unaccepted.
 *
 * Nothing here imports `vscode`: the dialogs are an `ApprovalUi`.
 */

import { type ApprovalUi, denyWithReason, describe } from './approvals';
import type { Client } from './client';
import { type ApprovalParams, type ApprovalResult, MAIN_PANE, Method } from './protocol';

export const ACCEPT = 'Accept';
export const REJECT = 'Reject';

/**
 * Review mode of the main pane, switched by AgentLS: Toggle Review Mode
 * (the `agentls.review` setting sets it for every pane). `enabled()` is what
 * the extension last set; the answer is the new value once the server has it.
 */
export class ReviewSwitch {
  constructor(
    private readonly client: Client,
    public enabled: boolean,
  ) {}

  async toggle(): Promise<boolean> {
    const next = !this.enabled;
    await this.client.request(Method.setReview, { pane: MAIN_PANE, enabled: next });
    this.enabled = next;
    return next;
  }
}

export async function askReview(params: ApprovalParams, ui: ApprovalUi): Promise<ApprovalResult> {
  await ui.showDiff(params);
  const { detail } = describe(params);
  // Not modal: the diff editor stays readable while the question is open.
  const choice = await ui.choose(`AgentLS: review — ${params.title}`, detail, [ACCEPT, REJECT], false);
  if (choice === ACCEPT) {
    return { decision: 'allow' };
  }
  if (choice === REJECT) {
    return denyWithReason(ui, 'AgentLS: Reject the patch', 'e.g. keep the public name, rename only the helper');
  }
  return { decision: 'deny' };
}
