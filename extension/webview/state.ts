// What the panel knows of the chat beyond its DOM: chat.ts updates it from the extension's
// messages, the composer reads it (and marks a turn running as soon as the user sends).
import type { ChatViewStatus } from "../src/chatProtocol";

export const panel: {
  /** The extension's last status (server, key, model, approval mode). */
  status: ChatViewStatus | undefined;
  /** A turn runs (or a message was sent and not yet echoed back). */
  running: boolean;
  /** What Retry sends again. */
  lastUserText: string | undefined;
} = { status: undefined, running: false, lastUserText: undefined };
