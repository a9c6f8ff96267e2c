import {
  Metadata,
  ServerInterceptingCall,
  type ServerInterceptingCallInterface,
  type ServerInterceptor,
  type ServiceDefinition,
  type StatusObject,
  status,
} from "@grpc/grpc-js";

/** grpc-js's `PartialStatusObject` (not exported by its index): what `sendStatus` carries. */
type PartialStatus = Pick<StatusObject, "code" | "details"> & { metadata?: Metadata | null };

import { TENANT_HEADER } from "@svc/auth";
import type { Logger } from "pino";
import { annotationOf } from "./annotate.ts";
import type { AuditEmitter } from "./audit-emitter.ts";
import { isLinked, verifiedIdentityOf } from "./call-link.ts";
import { AuditEmitterError } from "./errors.ts";
import { resultOf } from "./status-name.ts";

/** The answer of a fail-closed call whose record could not be (or, with the sink failing, will not be) written. */
export const AUDIT_UNAVAILABLE_STATUS = {
  code: status.UNAVAILABLE,
  details: "audit record could not be written",
} as const;

/** The record's `resource` from the call's first request message. */
export type ResourceOf = (request: unknown) => string;

export interface AuditInterceptorOptions {
  /** Method path (`/pkg.Service/Method`) → resource function; see `resourcesOf` to build it from method names. */
  resources?: Readonly<Record<string, ResourceOf>>;
  /**
   * Method paths not to record (default: none). For calls that are not API use, such as `/grpc.health.v1.Health/`
   * probes a platform sends every few seconds; every other call is recorded.
   */
  exclude?: (path: string) => boolean;
  /**
   * Where a throwing resource function is reported (the record then carries `""`), and, once, a call answered OK
   * whose handler was never linked (the service was added without `withAuditIdentity`: identities record `""`).
   */
  logger?: Logger;
}

/**
 * Maps resource functions by method name (the keys of a grpc-js service definition) to method paths. A name that
 * is not a method of the service is a wiring error at start-up (a typo would silently record `""` otherwise).
 */
export function resourcesOf(
  definition: ServiceDefinition,
  byMethod: Readonly<Record<string, ResourceOf>>,
): Record<string, ResourceOf> {
  const byPath: Record<string, ResourceOf> = {};
  for (const [method, resourceOf] of Object.entries(byMethod)) {
    const spec = Object.hasOwn(definition, method) ? definition[method] : undefined;
    if (!spec) {
      throw new AuditEmitterError("AUDIT_EMITTER_WIRING_INVALID", `${method} is not a method of the service`, {
        subject: method,
      });
    }
    byPath[spec.path] = resourceOf;
  }
  return byPath;
}

/** `x-tenant-id` exactly as received (first value); never the authorization header. */
function claimedTenant(metadata: Metadata | undefined): string {
  const value = metadata?.get(TENANT_HEADER)[0];
  if (value === undefined) return "";
  return typeof value === "string" ? value : value.toString("latin1");
}

/**
 * How close to its deadline a cancelled call counts as DEADLINE_EXCEEDED: the client's own deadline timer resets
 * the stream slightly before the server's copy of the deadline (computed on arrival) runs out.
 */
const DEADLINE_SLACK_MS = 100;

function cancelledCode(call: ServerInterceptingCallInterface): number {
  const deadline = call.getDeadline();
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isFinite(at) && Date.now() >= at - DEADLINE_SLACK_MS ? status.DEADLINE_EXCEEDED : status.CANCELLED;
}

/**
 * A grpc-js server interceptor (`new Server({ interceptors: [auditInterceptor(emitter)] })`) that records every
 * call that reaches a handler — unary and streaming, answered, failed, refused by auth, cancelled or past its
 * deadline — as exactly one record, when its status is sent (or the client goes away first). `action` is the
 * method path, `result` the status name (`ok` for OK), `claimed_tenant_id` the `x-tenant-id` as received, and
 * `principal_id` / `tenant_id` the caller `@svc/auth` verified (through `withAuditIdentity`, `call-link.ts`), also
 * when its policy refused that caller (PERMISSION_DENIED, through the `linkRefusedCaller` hook).
 *
 * Fail-closed: the call's status is held until its record is written and replaced with UNAVAILABLE when it
 * cannot be (a unary response or stream messages already sent are not taken back: the client still sees the
 * call fail); while the sink is failing (its last write failed) a new call is refused with UNAVAILABLE before its
 * handler runs, and that refusal is itself recorded — the first such record written makes the sink healthy again.
 */
export function auditInterceptor(emitter: AuditEmitter, options: AuditInterceptorOptions = {}): ServerInterceptor {
  const resources = options.resources ?? {};
  let warnedUnlinked = false;
  return (method, call) => {
    if (options.exclude?.(method.path)) return new ServerInterceptingCall(call);
    const started = new Date();
    const t0 = performance.now();
    const resourceOf = Object.hasOwn(resources, method.path) ? resources[method.path] : undefined;
    let metadata: Metadata | undefined;
    let resource = "";
    let sawMessage = false;
    let settled = false;

    /** Writes the call's record once; `undefined` in fail-open mode, else whether it was written. */
    const settle = (code: number): Promise<boolean> | undefined => {
      settled = true;
      const annotation = metadata ? annotationOf(metadata) : undefined;
      if (code === status.OK && !warnedUnlinked && !(metadata && isLinked(metadata))) {
        warnedUnlinked = true;
        options.logger?.warn(
          { action: method.path },
          "audit: a call succeeded without withAuditIdentity around its service; principal_id and tenant_id are empty",
        );
      }
      const pending = emitter.write({
        time: started,
        action: method.path,
        resource: annotation?.resource ?? resource,
        result: resultOf(code),
        duration_ms: performance.now() - t0,
        claimed_tenant_id: claimedTenant(metadata),
        ...(metadata ? verifiedIdentityOf(metadata) : { principal_id: "", tenant_id: "" }),
        attributes: annotation?.attributes,
      });
      return pending?.then(
        () => true,
        () => false,
      );
    };

    const intercepting: ServerInterceptingCall = new ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (received, nextMetadata) => {
            metadata = received;
            if (emitter.failMode === "closed" && !emitter.healthy) {
              // the handler never sees the call; its status goes through sendStatus below, so it is recorded
              intercepting.sendStatus({ ...AUDIT_UNAVAILABLE_STATUS, metadata: new Metadata() });
              return;
            }
            nextMetadata(received);
          },
          onReceiveMessage: (message, nextMessage) => {
            if (!sawMessage && resourceOf) {
              sawMessage = true;
              try {
                resource = resourceOf(message);
              } catch (error) {
                options.logger?.warn(
                  { action: method.path, reason: String(error) },
                  "audit: resource function threw; recorded as empty",
                );
              }
            }
            nextMessage(message);
          },
          onCancel: () => {
            if (!settled) void settle(cancelledCode(call));
          },
        }),
      sendStatus: (statusObject: PartialStatus, nextStatus) => {
        if (settled) {
          nextStatus(statusObject);
          return;
        }
        const outcome = settle(statusObject.code);
        if (outcome === undefined) {
          nextStatus(statusObject);
          return;
        }
        void outcome.then((ok) =>
          nextStatus(ok ? statusObject : { ...AUDIT_UNAVAILABLE_STATUS, metadata: new Metadata() }),
        );
      },
    });
    return intercepting;
  };
}
