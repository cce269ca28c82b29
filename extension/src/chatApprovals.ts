// The approvals the server asks for (`memlens/chat/approve`) while they wait for the user's
// answer in the Chat view. Whatever happens (the user answers, the request is cancelled, the
// turn ends, the server or the extension stops), each is answered exactly once.
import * as vscode from "vscode";
import { ApprovalOutcome, ApprovalRequest, ApprovalResponse, ToWebview } from "./chatProtocol";

interface PendingApproval {
  sessionId: string;
  resolve: (result: ApprovalResponse) => void;
}

export class ChatApprovals {
  private readonly pending = new Map<number, PendingApproval>();
  private nextRequestId = 1;

  constructor(
    /** Shows a message in the view (and keeps it in the transcript). */
    private readonly post: (message: ToWebview) => void,
    /** Shows the view, if hidden. */
    private readonly reveal: () => Promise<void>,
  ) {}

  /** Answers `memlens/chat/approve`: the user decides in the panel (revealed if hidden). */
  async ask(params: ApprovalRequest, token: vscode.CancellationToken): Promise<ApprovalResponse> {
    if (token.isCancellationRequested) {
      return { outcome: "deny" };
    }
    const requestId = this.nextRequestId++;
    const answer = new Promise<ApprovalResponse>((resolve) => {
      this.pending.set(requestId, { sessionId: params.sessionId, resolve });
    });
    const cancelled = token.onCancellationRequested(() => this.resolve(requestId, "deny", "cancelled"));
    this.post({ type: "approve", requestId, request: params });
    await this.reveal();
    try {
      return await answer;
    } finally {
      cancelled.dispose();
    }
  }

  /** Answers one approval (the user's choice, or a denial with its reason); later answers are ignored. */
  resolve(requestId: number, outcome: ApprovalOutcome, reason?: string): void {
    const approval = this.pending.get(requestId);
    if (!approval) {
      return;
    }
    this.pending.delete(requestId);
    approval.resolve({ outcome });
    this.post({ type: "approvalResolved", requestId, outcome, reason });
  }

  /** Denies every waiting approval of the sessions `which` picks, saying why. */
  denyWhere(which: (sessionId: string) => boolean, reason: string): void {
    for (const [requestId, approval] of [...this.pending]) {
      if (which(approval.sessionId)) {
        this.resolve(requestId, "deny", reason);
      }
    }
  }
}
