import { readFileSync } from "node:fs";
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { isLoopbackHost, parseAddress } from "./address.ts";
import { SdkError } from "./errors.ts";

const NonEmpty = Type.String({ minLength: 1 });

/** Settings of the IdP used for automatic renewal with the refresh token. */
export const IdpOptionsSchema = Type.Object(
  {
    /** Full token endpoint URL, e.g. `https://idp.example/realms/svc/protocol/openid-connect/token`. */
    token_endpoint: Type.Optional(NonEmpty),
    /** IdP base URL (spec: `{idp_base_url}`); with `realm` it gives the Keycloak token endpoint. */
    idp_url: Type.Optional(NonEmpty),
    /** Realm name (spec: `IDP_REALM`, default `svc`). */
    realm: Type.Optional(NonEmpty),
    /** OAuth client id (spec default `svc-cli`). */
    client_id: Type.Optional(NonEmpty),
  },
  { additionalProperties: false },
);

/**
 * Options of `createClient` (names follow the spec's SDK arguments: `access_token`, `refresh_token`, `secure`,
 * `kms_secure`, `kms_ca_cert`). Unknown fields are rejected.
 */
export const ClientOptionsSchema = Type.Object(
  {
    /** `host:port` of the gRPC endpoint (the audit service or `endpoint`). */
    address: NonEmpty,
    access_token: Type.Optional(NonEmpty),
    refresh_token: Type.Optional(NonEmpty),
    /** TLS for `address`. Default: true when a token is given, else false (spec "Connection security"). */
    secure: Type.Optional(Type.Boolean()),
    /** Path to a PEM root CA for `address`; without it the system roots are used. */
    ca_cert: Type.Optional(NonEmpty),
    /** `host:port` of the KMS (spec default port 50090). */
    kms_address: Type.Optional(NonEmpty),
    /** TLS for the KMS; default true (the KMS speaks TLS by default). */
    kms_secure: Type.Optional(Type.Boolean()),
    /** Path to the exported root CA of the KMS (PEM). */
    kms_ca_cert: Type.Optional(NonEmpty),
    idp: Type.Optional(IdpOptionsSchema),
    /** Sent as `x-tenant-id` metadata on every call. */
    tenant_id: Type.Optional(NonEmpty),
    /** Renew this many seconds before the access token expires; clamped to half the token's lifetime. */
    renew_before_seconds: Type.Optional(Type.Number({ minimum: 0 })),
    /** Deadline of each call. */
    call_timeout_ms: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);

export type IdpOptions = Static<typeof IdpOptionsSchema>;

export interface RenewedTokens {
  accessToken: string;
  refreshToken: string;
}

export type ClientOptions = Static<typeof ClientOptionsSchema> & {
  /** Called after each successful renewal, e.g. to rewrite the token files (owner-only permission, chmod 600). */
  on_tokens_renewed?: (tokens: RenewedTokens) => void;
};

export const DEFAULT_CLIENT_ID = "svc-cli";
export const DEFAULT_REALM = "svc";
export const DEFAULT_RENEW_BEFORE_SECONDS = 60;
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;

export interface TargetSettings {
  address: string;
  secure: boolean;
  /** PEM bytes of the root CA; undefined = system roots. */
  caCert: Buffer | undefined;
  /** Option names, for messages: `secure`/`ca_cert` or `kms_secure`/`kms_ca_cert`. */
  secureOption: "secure" | "kms_secure";
  caOption: "ca_cert" | "kms_ca_cert";
}

export interface ResolvedClientOptions {
  main: TargetSettings;
  kms: TargetSettings | undefined;
  accessToken: string | undefined;
  refreshToken: string | undefined;
  tokenEndpoint: string | undefined;
  clientId: string;
  tenantId: string | undefined;
  renewBeforeSeconds: number;
  callTimeoutMs: number;
  onTokensRenewed: ((tokens: RenewedTokens) => void) | undefined;
}

function invalid(field: string, message: string): SdkError {
  return new SdkError("SDK_CONFIG_INVALID", `SDK option ${field}: ${message}`, { subject: field });
}

function checkAddress(field: string, address: string): void {
  if (!parseAddress(address)) {
    throw invalid(field, `expected host:port (e.g. 127.0.0.1:50050), got ${JSON.stringify(address)}`);
  }
}

function readCa(field: "ca_cert" | "kms_ca_cert", path: string | undefined): Buffer | undefined {
  if (path === undefined) return undefined;
  let pem: Buffer;
  try {
    pem = readFileSync(path);
  } catch (cause) {
    throw new SdkError(
      "SDK_CA_CERT_UNREADABLE",
      `SDK option ${field}: cannot read the root CA file ${path}`,
      { subject: field },
      { cause },
    );
  }
  if (!pem.toString("utf8").includes("-----BEGIN CERTIFICATE-----")) {
    throw new SdkError("SDK_CA_CERT_UNREADABLE", `SDK option ${field}: ${path} holds no PEM certificate`, {
      subject: field,
    });
  }
  return pem;
}

/** Token endpoint from `idp`: `token_endpoint` as given, or Keycloak's path under `idp_url` and `realm`. */
function resolveTokenEndpoint(idp: IdpOptions | undefined): string | undefined {
  if (!idp) return undefined;
  if (idp.token_endpoint !== undefined && idp.idp_url !== undefined) {
    throw invalid("idp", "give either token_endpoint or idp_url (+ realm), not both");
  }
  const field = idp.token_endpoint !== undefined ? "idp.token_endpoint" : "idp.idp_url";
  const raw =
    idp.token_endpoint ??
    (idp.idp_url === undefined
      ? undefined
      : `${idp.idp_url.replace(/\/+$/, "")}/realms/${encodeURIComponent(idp.realm ?? DEFAULT_REALM)}/protocol/openid-connect/token`);
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(field, `expected an http(s) URL, got ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw invalid(field, `expected an http(s) URL, got ${JSON.stringify(raw)}`);
  }
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
    throw invalid(
      field,
      `plain HTTP is accepted only for a loopback IdP (the IdP answers "HTTPS required"); use https`,
    );
  }
  return url.toString();
}

/** Validates `createClient` options (a bad value names its field), applies the defaults and reads the CA files. */
export function resolveClientOptions(input: unknown): ResolvedClientOptions {
  if (typeof input !== "object" || input === null) throw invalid("(options)", "expected an object");
  const { on_tokens_renewed: onTokensRenewed, ...rest } = input as Record<string, unknown>;
  if (onTokensRenewed !== undefined && typeof onTokensRenewed !== "function") {
    throw invalid("on_tokens_renewed", "expected a function");
  }
  const first = Value.Errors(ClientOptionsSchema, rest).First();
  if (first) {
    const field = first.path.replace(/^\//, "").replaceAll("/", ".") || "(options)";
    throw invalid(field, `${first.message} (got ${JSON.stringify(first.value)})`);
  }
  const options = rest as Static<typeof ClientOptionsSchema>;
  checkAddress("address", options.address);
  if (options.kms_address !== undefined) checkAddress("kms_address", options.kms_address);
  const hasToken = options.access_token !== undefined || options.refresh_token !== undefined;
  const tokenEndpoint = resolveTokenEndpoint(options.idp);
  if (options.refresh_token !== undefined && tokenEndpoint === undefined) {
    throw invalid("idp", "a refresh_token needs idp.token_endpoint or idp.idp_url to renew the access token");
  }
  const main: TargetSettings = {
    address: options.address,
    secure: options.secure ?? hasToken,
    caCert: readCa("ca_cert", options.ca_cert),
    secureOption: "secure",
    caOption: "ca_cert",
  };
  const kms: TargetSettings | undefined =
    options.kms_address === undefined
      ? undefined
      : {
          address: options.kms_address,
          secure: options.kms_secure ?? true,
          caCert: readCa("kms_ca_cert", options.kms_ca_cert),
          secureOption: "kms_secure",
          caOption: "kms_ca_cert",
        };
  return {
    main,
    kms,
    accessToken: options.access_token,
    refreshToken: options.refresh_token,
    tokenEndpoint,
    clientId: options.idp?.client_id ?? DEFAULT_CLIENT_ID,
    tenantId: options.tenant_id,
    renewBeforeSeconds: options.renew_before_seconds ?? DEFAULT_RENEW_BEFORE_SECONDS,
    callTimeoutMs: options.call_timeout_ms ?? DEFAULT_CALL_TIMEOUT_MS,
    onTokensRenewed: onTokensRenewed as ((tokens: RenewedTokens) => void) | undefined,
  };
}
