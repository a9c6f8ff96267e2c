import type { EventFields, KmsEventKind } from "@svc/audit-emitter";
import { KMS_ERROR_CODES, KmsError, type KmsErrorCode } from "./errors.ts";

/**
 * The messages between the KMS's primary and its workers over node:cluster's IPC channel (docs/kms.md "Workers").
 * A request carries an id; its reply names that id and carries the error (code and message) when it failed.
 */

/** What a worker asks of the primary: a change every process must see, or a key event to record once. */
export type WorkerRequest =
  | { op: "seal" }
  | { op: "unseal"; passphrase: string }
  | { op: "keyChanged"; tenant: string; name: string }
  | { op: "record"; kind: KmsEventKind; fields: EventFields };

/** What the primary applies in a worker (a seal, an unseal or a key change another worker made). */
export type PrimaryCommand =
  | { op: "seal" }
  | { op: "unseal"; passphrase: string }
  | { op: "forget"; tenant: string; name: string };

export interface WireError {
  code: string;
  message: string;
}

export interface Reply {
  t: "reply";
  id: number;
  error?: WireError;
}

export type WorkerMessage =
  | { t: "hello" }
  | { t: "serving"; grpcPort: number; httpPort?: number }
  | { t: "failed"; error: WireError }
  | ({ t: "request"; id: number } & WorkerRequest)
  | Reply;

export type PrimaryMessage =
  | { t: "start"; admin: boolean; certificate?: { certPem: string; keyPem: string } }
  | ({ t: "command"; id: number } & PrimaryCommand)
  | { t: "stop" }
  | Reply;

/** An error as it crosses the channel: a KmsError keeps its code; anything else is a worker failure. */
export function toWire(error: unknown): WireError {
  if (error instanceof KmsError) return { code: error.code, message: error.message };
  return { code: "KMS_WORKER_FAILED", message: (error as Error)?.message ?? String(error) };
}

/** The KmsError a wire error stands for (its code, or KMS_WORKER_FAILED when the code is not a KMS one). */
export function fromWire(error: WireError): KmsError {
  const known = (KMS_ERROR_CODES as readonly string[]).includes(error.code);
  return new KmsError(known ? (error.code as KmsErrorCode) : "KMS_WORKER_FAILED", error.message);
}
