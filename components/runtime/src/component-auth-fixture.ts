import type { ClientOptions } from "@grpc/grpc-js";
import { createServiceTokenSource, serviceTokenInterceptor } from "@svc/auth";
import { type SeededRealm, seedTestRealm } from "@svc/testkit";
import { issueToken } from "@svc/token";
import pino from "pino";

/**
 * A test file's realm on the stack's Keycloak, seeded as `ops/dev up` seeds `svc` (the `svc-components` client
 * included): the environment that puts component replicas behind real service auth, and client options for a
 * test's own calls to them as the `svc-components` service account.
 */
export interface ComponentAuthFixture {
  readonly realm: SeededRealm;
  /** `SVC_AUTH_ISSUER` and `SVC_AUTH_CLIENT_SECRET` of every replica the test starts. */
  readonly env: Readonly<Record<string, string>>;
  /** For a test's grpc-js client of a component: its calls carry the service account's token. */
  readonly clientOptions: ClientOptions;
  /** An access token of the realm's seeded user `role` (an application or operator, never a component). */
  userToken(role: "app" | "ops" | "security"): Promise<string>;
  /** Deletes the realm (call it in afterAll). */
  remove(): Promise<void>;
}

/** `SVC_AUTH_*` a config test needs for any component to parse (no IdP is asked at parse time). */
export const CONFIG_TEST_AUTH_ENV: Readonly<Record<string, string>> = {
  SVC_AUTH_ISSUER: "http://127.0.0.1:8082/realms/svc",
  SVC_AUTH_CLIENT_SECRET: "config-test-secret",
};

export async function componentAuthFixture(purpose: string): Promise<ComponentAuthFixture> {
  const realm = await seedTestRealm(purpose);
  const tokens = createServiceTokenSource({
    issuer: realm.issuer,
    credentials: { clientId: "svc-components", clientSecret: realm.componentsClientSecret },
    logger: pino({ level: "silent" }),
  });
  try {
    await tokens.start();
  } catch (error) {
    tokens.close();
    await realm.remove();
    throw error;
  }
  return {
    realm,
    env: { SVC_AUTH_ISSUER: realm.issuer, SVC_AUTH_CLIENT_SECRET: realm.componentsClientSecret },
    clientOptions: { interceptors: [serviceTokenInterceptor(tokens)] },
    async userToken(role) {
      const { url, realm: name, clientId, userPassword } = realm.seed;
      return (await issueToken({ url, realm: name, clientId }, { user: role, password: userPassword })).access_token;
    },
    async remove() {
      tokens.close();
      await realm.remove();
    },
  };
}
