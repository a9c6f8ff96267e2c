import { SvcError } from "@svc/common";

/** Stable codes of the SDK's failures; callers and tests branch on these, never on message text. */
export const SDK_ERROR_CODES = [
  "SDK_CONFIG_INVALID",
  "SDK_CA_CERT_UNREADABLE",
  "SDK_TLS_HANDSHAKE_FAILED",
  "SDK_TLS_CERT_REJECTED",
  "SDK_UNAVAILABLE",
  "SDK_UNAUTHENTICATED",
  "SDK_PERMISSION_DENIED",
  "SDK_DEADLINE_EXCEEDED",
  "SDK_CALL_FAILED",
  "SDK_ACCESS_TOKEN_EXPIRED",
  "SDK_REFRESH_FAILED",
  "SDK_REFRESH_TOKEN_EXPIRED",
  "SDK_CLOSED",
] as const;

export type SdkErrorCode = (typeof SDK_ERROR_CODES)[number];

/** Codes after which the same call may succeed when retried later (network, IdP or server hiccups). */
const RETRYABLE: ReadonlySet<SdkErrorCode> = new Set<SdkErrorCode>([
  "SDK_UNAVAILABLE",
  "SDK_DEADLINE_EXCEEDED",
  "SDK_REFRESH_FAILED",
]);

export interface SdkErrorDetails {
  /** gRPC status code of the failed call, when the failure came from a call. */
  grpcCode?: number;
  /** The option (`ca_cert`, `idp.token_endpoint`, ...) the failure is about, when there is one. */
  subject?: string;
  /** The server's own error code when its status details start with one (`KMS_SEALED: ...`, `AUTH_...: ...`). */
  serverCode?: string;
}

export class SdkError extends SvcError<SdkErrorCode> {
  readonly grpcCode: number | undefined;
  readonly serverCode: string | undefined;

  constructor(code: SdkErrorCode, message: string, details: SdkErrorDetails = {}, options?: ErrorOptions) {
    super(code, message, { subject: details.subject, canRetry: RETRYABLE.has(code), cause: options?.cause });
    this.grpcCode = details.grpcCode;
    this.serverCode = details.serverCode;
  }
}
