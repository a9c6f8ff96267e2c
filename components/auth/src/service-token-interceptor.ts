import { InterceptingCall, type Interceptor, Metadata, status } from "@grpc/grpc-js";
import { AUTHORIZATION_HEADER, TENANT_HEADER } from "./auth-headers.ts";
import type { ServiceTokenSource } from "./service-token-source.ts";

/** The code of whatever `token()` rejected with, for the status details (never its message: no secret, no token). */
function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "AUTH_SERVICE_TOKEN_FAILED";
}

/**
 * grpc-js client interceptor: every outgoing call carries `authorization: Bearer <token>` (left out when the token
 * is empty, i.e. auth disabled) and `x-tenant-id: <tenant>` from `source`. The call waits for the token (at once
 * while one is held); when `source.token()` rejects, the call ends at once with `UNAVAILABLE`, details
 * `"service token unavailable: <code>"`, and never reaches the server.
 *
 * `new XServiceClient(address, credentials.createInsecure(), { interceptors: [serviceTokenInterceptor(source)] })`
 */
export function serviceTokenInterceptor(source: ServiceTokenSource): Interceptor {
  return (options, nextCall) => {
    const next = nextCall(options);
    return new InterceptingCall(next, {
      start(metadata, listener, proceed) {
        source.token().then(
          ({ accessToken, tenantId }) => {
            if (accessToken !== "") metadata.set(AUTHORIZATION_HEADER, `Bearer ${accessToken}`);
            metadata.set(TENANT_HEADER, tenantId);
            proceed(metadata, listener);
          },
          (error: unknown) => {
            const details = `service token unavailable: ${codeOf(error)}`;
            // the call below was never started: ending it releases it without a second status to the caller
            next.cancelWithStatus(status.UNAVAILABLE, details);
            listener.onReceiveStatus({ code: status.UNAVAILABLE, details, metadata: new Metadata() });
          },
        );
      },
    });
  };
}
