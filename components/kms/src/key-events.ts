import { status } from "@grpc/grpc-js";
import { type AuditEmitter, type EventFields, type KmsEventKind, resultOf } from "@svc/audit-emitter";
import { authErrorStatus, type Caller, isAuthError } from "@svc/auth";
import { KmsError, kmsErrorStatus } from "./errors.ts";

/** Who caused an event and how it ended, as the record carries them (docs/kms.md "Audit"). */
export interface EventOutcome {
  resource: string;
  caller?: Caller;
  claimedTenantId?: string;
  startedAt: number;
  error?: unknown;
  attributes?: Record<string, string>;
}

/** The gRPC status an outcome is answered with (OK without an error); its name is the record's `result`. */
function statusOf(error: unknown): status {
  if (error === undefined) return status.OK;
  return isAuthError(error) ? authErrorStatus(error).code : kmsErrorStatus(error).code;
}

/**
 * Records one KMS event (never key material, plaintext, passphrase or token: only names, codes and identities).
 * Fail-closed emitters reject when the record was not written: that becomes `KMS_AUDIT_FAILED`.
 */
export async function recordKeyEvent(emitter: AuditEmitter, kind: KmsEventKind, outcome: EventOutcome): Promise<void> {
  const attributes = { ...outcome.attributes };
  const code = (outcome.error as { code?: unknown } | undefined)?.code;
  if (typeof code === "string") attributes.error = code;
  const fields: EventFields = {
    resource: outcome.resource,
    result: resultOf(statusOf(outcome.error)),
    principal_id: outcome.caller?.principalId ?? "",
    tenant_id: outcome.caller?.tenantId ?? "",
    claimed_tenant_id: outcome.claimedTenantId ?? "",
    duration_ms: Math.max(0, performance.now() - outcome.startedAt),
    attributes,
  };
  try {
    await emitter.record(kind, fields);
  } catch (cause) {
    throw new KmsError("KMS_AUDIT_FAILED", `the ${kind} event could not be recorded`, { canRetry: true, cause });
  }
}
