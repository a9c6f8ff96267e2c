import type { Metadata, ServerUnaryCall, sendUnaryData, UntypedServiceImplementation } from "@grpc/grpc-js";
import type { AuditEmitter, KmsEventKind } from "@svc/audit-emitter";
import {
  type AuthCore,
  authErrorStatus,
  authorize,
  type Caller,
  isAuthError,
  type Operation,
  TENANT_HEADER,
} from "@svc/auth";
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

function values(metadata: Metadata, key: string): string[] {
  return metadata.get(key).map((value) => (typeof value === "string" ? value : value.toString("latin1")));
}

const nameOf = (request: unknown): string | undefined => {
  const name = (request as { name?: unknown }).name;
  return typeof name === "string" && name !== "" ? name : undefined;
};

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
 * `svc.kms.v1.KmsService` (docs/kms.md "Methods"). Each handler authenticates with @svc/auth, applies the method's
 * policy row, and records a `permission-denied` event for a PERMISSION_DENIED refusal; key events are recorded with
 * their outcome. Not `authorizeService`: its wrapper answers refusals itself, so the refusal could not be recorded.
 */
export function kmsServiceImplementation(deps: KmsServiceDeps): UntypedServiceImplementation {
  const { auth, keys, vault, emitter, logger } = deps;
  const resource = (caller: Caller, request: unknown) => {
    const name = nameOf(request);
    return name ? `keys/${caller.tenantId}/${name}` : "kms";
  };

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
      run: async () => {
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
  for (const [method, spec] of Object.entries(methods)) {
    const path = KmsServiceService[method as keyof typeof KmsServiceService]?.path ?? method;
    implementation[method] = (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
      const startedAt = performance.now();
      const claimed = values(call.metadata, TENANT_HEADER)[0] ?? "";
      const handle = async () => {
        let caller: Caller | undefined;
        try {
          caller = await auth.authenticate({
            authorization: values(call.metadata, "authorization"),
            tenantId: values(call.metadata, TENANT_HEADER),
          });
          authorize(caller, spec.operation);
        } catch (error) {
          if (isAuthError(error) && error.kind === "permission-denied") {
            const name = nameOf(call.request);
            await recordKeyEvent(emitter, "permission-denied", {
              resource: name ? `keys/${caller?.tenantId ?? claimed}/${name}` : "kms",
              caller,
              claimedTenantId: claimed,
              startedAt,
              error,
              attributes: { method: path, operation: spec.operation },
            }).catch((cause: unknown) => logger.error({ err: cause }, "permission-denied event not recorded"));
            logger.info({ code: error.code, method: path, operation: spec.operation }, "kms call refused");
          }
          throw error;
        }
        const verified: Caller = caller;
        const outcome: EventOutcome = {
          resource: resource(verified, call.request),
          caller: verified,
          claimedTenantId: claimed,
          startedAt,
          attributes: { method: path },
        };
        try {
          const answer = await spec.run(verified, call.request as never, outcome);
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
          if (isAuthError(error)) return callback(authErrorStatus(error));
          const status = kmsErrorStatus(error);
          if (status.details === "internal error") logger.error({ err: error, method: path }, "kms call failed");
          callback(status);
        },
      );
    };
  }
  return implementation;
}
