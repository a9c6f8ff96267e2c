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
  field?: string;
}

export class SdkError extends Error {
  readonly code: SdkErrorCode;
  readonly canRetry: boolean;
  readonly grpcCode: number | undefined;
  readonly field: string | undefined;

  constructor(code: SdkErrorCode, message: string, details: SdkErrorDetails = {}, options?: ErrorOptions) {
    super(message, options);
    this.name = "SdkError";
    this.code = code;
    this.canRetry = RETRYABLE.has(code);
    this.grpcCode = details.grpcCode;
    this.field = details.field;
  }
}
