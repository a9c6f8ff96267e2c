import type { Metadata, ServerUnaryCall, sendUnaryData, UntypedServiceImplementation } from "@grpc/grpc-js";
import type { AuditEmitter, KmsEventKind } from "@svc/audit-emitter";
import { type AuthCore, authorizeService, type Caller, callerOf, type Operation, TENANT_HEADER } from "@svc/auth";
import { KmsServiceService } from "@svc/proto";
import type { Logger } from "pino";
import { kmsErrorStatus } from "./errors.ts";
import { type EventOutcome, recordKeyEvent } from "./key-events.ts";
import { keyMetadata, kindFromProto, kindToProto } from "./key-metadata.ts";
import type { KeyService } from "./key-service.ts";
import type { Vault } from "./vault.ts";

type Run = (caller: Caller, request: never, outcome: EventOutcome) => Promise<unknown>;

/** One method: its policy row, the audited kind it records (if any), and what it does for a verified caller. */
interface Method {
  operation: Operation;
  event?: KmsEventKind;
  run: Run;
}

/** `x-tenant-id` as received (first value), for `claimed_tenant_id`. */
function claimedTenant(metadata: Metadata): string {
  const value = metadata.get(TENANT_HEADER)[0];
  return value === undefined ? "" : typeof value === "string" ? value : value.toString("latin1");
}

/** The record's resource: `keys/<tenant>/<name>` for a call on a key, else `kms`. */
function resourceOf(tenant: string, request: unknown): string {
  const name = (request as { name?: unknown } | undefined)?.name;
  return typeof name === "string" && name !== "" ? `keys/${tenant}/${name}` : "kms";
}

const empty = (bytes: Uint8Array | undefined) => bytes ?? new Uint8Array();

export interface KmsServiceDeps {
  auth: AuthCore;
  keys: KeyService;
  vault: Vault;
  emitter: AuditEmitter;
  /** Unseal with the passphrase of a call (records the event itself). */
  unseal: (passphrase: string, outcome: EventOutcome) => Promise<void>;
  logger: Logger;
}

/**
 * `svc.kms.v1.KmsService` (docs/kms.md "Methods"), behind @svc/auth's `authorizeService` with each method's policy
 * row. A PERMISSION_DENIED refusal is recorded as a `permission-denied` event (its `onRefused` hook, before the
 * answer); key events are recorded with their outcome.
 */
export function kmsServiceImplementation(deps: KmsServiceDeps): UntypedServiceImplementation {
  const { auth, keys, vault, emitter, logger } = deps;

  const methods: Record<string, Method> = {
    generateKey: {
      operation: "kms.keys.manage",
      event: "key-generation",
      run: async (caller, request: { name: string; kind: number }, outcome) => {
        const kind = kindFromProto(request.kind);
        outcome.attributes = { ...outcome.attributes, key_kind: kind };
        return { key: keyMetadata(await keys.generate(caller.tenantId, request.name, kind)) };
      },
    },
    rotateKey: {
      operation: "kms.keys.manage",
      event: "rotation",
      run: async (caller, request: { name: string }, outcome) => {
        const row = await keys.rotate(caller.tenantId, request.name);
        outcome.attributes = { ...outcome.attributes, version: String(row.primaryVersion) };
        return { key: keyMetadata(row) };
      },
    },
    revokeKey: {
      operation: "kms.keys.manage",
      event: "revocation",
      run: async (caller, request: { name: string }) => ({
        key: keyMetadata(await keys.revoke(caller.tenantId, request.name)),
      }),
    },
    listKeys: {
      operation: "kms.keys.manage",
      run: async (caller) => ({ keys: (await keys.list(caller.tenantId)).map(keyMetadata) }),
    },
    getPublicKey: {
      operation: "kms.pubkey.read",
      run: async (caller, request: { name: string; version: number }) => {
        const answer = await keys.publicKey(caller.tenantId, request.name, request.version);
        return { publicKeyPem: answer.publicKeyPem, version: answer.version, kind: kindToProto(answer.kind) };
      },
    },
    encrypt: {
      operation: "kms.keys.use",
      run: (caller, request: { name: string; plaintext: Buffer; associatedData: Buffer }) =>
        keys.encrypt(caller.tenantId, request.name, empty(request.plaintext), empty(request.associatedData)),
    },
    decrypt: {
      operation: "kms.keys.use",
      run: (caller, request: { name: string; ciphertext: Buffer; associatedData: Buffer }) =>
        keys.decrypt(caller.tenantId, request.name, empty(request.ciphertext), empty(request.associatedData)),
    },
    sign: {
      operation: "kms.keys.use",
      run: (caller, request: { name: string; message: Buffer }) =>
        keys.sign(caller.tenantId, request.name, empty(request.message)),
    },
    verify: {
      operation: "kms.keys.use",
      run: async (caller, request: { name: string; message: Buffer; signature: Buffer; version: number }) => ({
        valid: await keys.verify(
          caller.tenantId,
          request.name,
          empty(request.message),
          empty(request.signature),
          request.version,
        ),
      }),
    },
    seal: {
      operation: "kms.keys.manage",
      event: "seal",
      run: async (_caller, _request, outcome) => {
        outcome.attributes = { ...outcome.attributes, trigger: "call" };
        vault.seal();
        logger.warn({}, "kms sealed: key use is refused until unsealed");
        return { sealed: true };
      },
    },
    unseal: {
      operation: "kms.keys.manage",
      run: async (_caller, request: { passphrase: string }, outcome) => {
        await deps.unseal(request.passphrase ?? "", { ...outcome, attributes: { trigger: "call" } });
        return { sealed: vault.sealed };
      },
    },
  };

  const implementation: UntypedServiceImplementation = {};
  const operations: Record<string, Operation> = {};
  for (const [method, spec] of Object.entries(methods)) {
    operations[method] = spec.operation;
    implementation[method] = (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
      const caller = callerOf(call);
      const outcome: EventOutcome = {
        resource: resourceOf(caller.tenantId, call.request),
        caller,
        claimedTenantId: claimedTenant(call.metadata),
        startedAt: performance.now(),
        attributes: { method: call.getPath() },
      };
      const handle = async () => {
        try {
          const answer = await spec.run(caller, call.request as never, outcome);
          if (spec.event) await recordKeyEvent(emitter, spec.event, outcome);
          return answer;
        } catch (error) {
          if (spec.event) await recordKeyEvent(emitter, spec.event, { ...outcome, error });
          throw error;
        }
      };
      handle().then(
        (answer) => callback(null, answer),
        (error: unknown) => {
          const status = kmsErrorStatus(error);
          if (status.details === "internal error")
            logger.error({ err: error, method: call.getPath() }, "kms call failed");
          callback(status);
        },
      );
    };
  }
  return authorizeService(auth, KmsServiceService, implementation, operations, {
    onRefused: async ({ error, call, operation, startedAt }) => {
      if (error.kind !== "permission-denied") return;
      const claimed = claimedTenant(call.metadata);
      await recordKeyEvent(emitter, "permission-denied", {
        // The tenant whose key was asked for: the header's (a tenant mismatch names the other tenant's key).
        resource: resourceOf(
          claimed !== "" ? claimed : (error.caller?.tenantId ?? ""),
          (call as { request?: unknown }).request,
        ),
        caller: error.caller,
        claimedTenantId: claimed,
        startedAt,
        error,
        attributes: { method: call.getPath(), operation },
      });
    },
  });
}
