import { randomUUID } from "node:crypto";
import {
  type CallOptions,
  Channel,
  type ChannelCredentials,
  type ClientUnaryCall,
  Metadata,
  type ServiceError,
} from "@grpc/grpc-js";
import {
  AuditServiceClient,
  DecryptRequest,
  type DecryptResponse,
  type DeepPartial,
  EncryptRequest,
  type EncryptResponse,
  ExportEventsRequest,
  type ExportEventsResponse,
  GenerateKeyRequest,
  type GenerateKeyResponse,
  GetPublicKeyRequest,
  type GetPublicKeyResponse,
  HealthCheckRequest,
  type HealthCheckResponse,
  HealthClient,
  KmsServiceClient,
  ListEventsRequest,
  type ListEventsResponse,
  ListKeysRequest,
  type ListKeysResponse,
  RevokeKeyRequest,
  type RevokeKeyResponse,
  RotateKeyRequest,
  type RotateKeyResponse,
  SealRequest,
  type SealResponse,
  SignRequest,
  type SignResponse,
  UnsealRequest,
  type UnsealResponse,
  VerifyRequest,
  type VerifyResponse,
} from "@svc/proto";
import { channelFor } from "./channel-credentials.ts";
import {
  type ClientOptions,
  type ResolvedClientOptions,
  resolveClientOptions,
  type TargetSettings,
} from "./client-options.ts";
import { SdkError } from "./errors.ts";
import { toSdkError } from "./grpc-error.ts";
import { TokenSource } from "./token-source.ts";

type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: Res) => void,
) => ClientUnaryCall;

interface Target {
  settings: TargetSettings;
  credentials: ChannelCredentials;
  channel: Channel;
  health: HealthClient;
}

/**
 * Client of the service's gRPC APIs (audit, health; KMS health when `kms_address` is set). Every call carries
 * `authorization: Bearer <access token>` (when a token is given) and `x-tenant-id` (when `tenant_id` is given);
 * the access token is renewed with the refresh token before it expires.
 */
export class SvcClient {
  readonly #options: ResolvedClientOptions;
  readonly #tokens: TokenSource;
  readonly #main: Target;
  readonly #kms: Target | undefined;
  readonly #audit: AuditServiceClient;
  readonly #kmsService: KmsServiceClient | undefined;
  #closed = false;

  constructor(options: ClientOptions) {
    this.#options = resolveClientOptions(options);
    this.#tokens = new TokenSource({
      accessToken: this.#options.accessToken,
      refreshToken: this.#options.refreshToken,
      tokenEndpoint: this.#options.tokenEndpoint,
      clientId: this.#options.clientId,
      renewBeforeSeconds: this.#options.renewBeforeSeconds,
      onTokensRenewed: this.#options.onTokensRenewed,
    });
    this.#main = this.#target(this.#options.main);
    this.#kms = this.#options.kms ? this.#target(this.#options.kms) : undefined;
    this.#audit = new AuditServiceClient(this.#options.main.address, this.#main.credentials, {
      channelOverride: this.#main.channel,
    });
    this.#kmsService = this.#kms
      ? new KmsServiceClient(this.#kms.settings.address, this.#kms.credentials, { channelOverride: this.#kms.channel })
      : undefined;
  }

  /** `secure` in effect for `address` (after the default: true when a token was given). */
  get secure(): boolean {
    return this.#options.main.secure;
  }

  /** Waits until the channel to `address` is connected. */
  connect(timeoutMs = this.#options.callTimeoutMs): Promise<void> {
    this.#assertOpen();
    return new Promise((resolve, reject) => {
      this.#audit.waitForReady(Date.now() + timeoutMs, (error) => {
        if (!error) return resolve();
        const hint = this.#main.settings.secure
          ? ` (secure is on: for a non-TLS endpoint pass \`secure: false\`, for TLS check \`ca_cert\`)`
          : "";
        reject(
          new SdkError(
            "SDK_UNAVAILABLE",
            `could not connect to ${this.#main.settings.address} within ${timeoutMs} ms${hint}`,
            {},
            { cause: error },
          ),
        );
      });
    });
  }

  /** `audit.v2.AuditService/list_events`; `header.id` defaults to a random UUID. */
  auditListEvents(request: DeepPartial<ListEventsRequest>): Promise<ListEventsResponse> {
    const message = ListEventsRequest.fromPartial({ ...request, header: { id: request.header?.id || randomUUID() } });
    return this.#unary(this.#main, this.#audit.listEvents.bind(this.#audit), message);
  }

  /** `audit.v2.AuditService/export_events` (JSONL in `data`); `header.id` defaults to a random UUID. */
  auditExportEvents(request: DeepPartial<ExportEventsRequest>): Promise<ExportEventsResponse> {
    const message = ExportEventsRequest.fromPartial({ ...request, header: { id: request.header?.id || randomUUID() } });
    return this.#unary(this.#main, this.#audit.exportEvents.bind(this.#audit), message);
  }

  /** `grpc.health.v1.Health/Check` on `address`; `service` "" asks for the server's overall health. */
  health(service = ""): Promise<HealthCheckResponse> {
    return this.#unary(
      this.#main,
      this.#main.health.check.bind(this.#main.health),
      HealthCheckRequest.fromPartial({ service }),
    );
  }

  /** `grpc.health.v1.Health/Check` on `kms_address` (TLS by default; `kms_ca_cert` for a private root CA). */
  kmsHealth(service = ""): Promise<HealthCheckResponse> {
    const kms = this.#kms;
    if (!kms) {
      return Promise.reject(
        new SdkError("SDK_CONFIG_INVALID", "SDK option kms_address: not set", { subject: "kms_address" }),
      );
    }
    return this.#unary(kms, kms.health.check.bind(kms.health), HealthCheckRequest.fromPartial({ service }));
  }

  /** `svc.kms.v1.KmsService/GenerateKey` (role keymanager): version 1 of a new key. */
  kmsGenerateKey(request: DeepPartial<GenerateKeyRequest>): Promise<GenerateKeyResponse> {
    return this.#kmsCall((c) => c.generateKey.bind(c), GenerateKeyRequest.fromPartial(request));
  }

  /** `RotateKey` (keymanager): a new primary version; older versions still decrypt. */
  kmsRotateKey(request: DeepPartial<RotateKeyRequest>): Promise<RotateKeyResponse> {
    return this.#kmsCall((c) => c.rotateKey.bind(c), RotateKeyRequest.fromPartial(request));
  }

  /** `RevokeKey` (keymanager): no further use. */
  kmsRevokeKey(request: DeepPartial<RevokeKeyRequest>): Promise<RevokeKeyResponse> {
    return this.#kmsCall((c) => c.revokeKey.bind(c), RevokeKeyRequest.fromPartial(request));
  }

  /** `ListKeys` (keymanager): metadata of the tenant's keys. */
  kmsListKeys(): Promise<ListKeysResponse> {
    return this.#kmsCall((c) => c.listKeys.bind(c), ListKeysRequest.fromPartial({}));
  }

  /** `GetPublicKey` (pubkey-reader or keymanager): SPKI PEM of a signing key's version (0 = primary). */
  kmsGetPublicKey(request: DeepPartial<GetPublicKeyRequest>): Promise<GetPublicKeyResponse> {
    return this.#kmsCall((c) => c.getPublicKey.bind(c), GetPublicKeyRequest.fromPartial(request));
  }

  /** `Encrypt` (app or keymanager): up to 64 KiB under the primary version; the ciphertext names its version. */
  kmsEncrypt(request: DeepPartial<EncryptRequest>): Promise<EncryptResponse> {
    return this.#kmsCall((c) => c.encrypt.bind(c), EncryptRequest.fromPartial(request));
  }

  /** `Decrypt` (app or keymanager). */
  kmsDecrypt(request: DeepPartial<DecryptRequest>): Promise<DecryptResponse> {
    return this.#kmsCall((c) => c.decrypt.bind(c), DecryptRequest.fromPartial(request));
  }

  /** `Sign` (app or keymanager). */
  kmsSign(request: DeepPartial<SignRequest>): Promise<SignResponse> {
    return this.#kmsCall((c) => c.sign.bind(c), SignRequest.fromPartial(request));
  }

  /** `Verify` (app or keymanager; a pubkey-reader verifies locally with `kmsGetPublicKey`). */
  kmsVerify(request: DeepPartial<VerifyRequest>): Promise<VerifyResponse> {
    return this.#kmsCall((c) => c.verify.bind(c), VerifyRequest.fromPartial(request));
  }

  /** `Seal` (keymanager): the KMS drops its master key; key use fails with `serverCode` `KMS_SEALED`. */
  kmsSeal(): Promise<SealResponse> {
    return this.#kmsCall((c) => c.seal.bind(c), SealRequest.fromPartial({}));
  }

  /** `Unseal` (keymanager) with the passphrase (sent over the KMS's TLS channel). */
  kmsUnseal(passphrase: string): Promise<UnsealResponse> {
    return this.#kmsCall((c) => c.unseal.bind(c), UnsealRequest.fromPartial({ passphrase }));
  }

  /** Renews the access token now (normally automatic). */
  async renewAccessToken(): Promise<void> {
    this.#assertOpen();
    await this.#tokens.renew();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#tokens.close();
    this.#audit.close();
    this.#kmsService?.close();
    for (const target of [this.#main, this.#kms]) {
      if (!target) continue;
      target.health.close();
      target.channel.close();
    }
  }

  #target(settings: TargetSettings): Target {
    // Secure channels ask the token source itself for each call's token (no copy shared between calls/targets).
    const { credentials, options } = channelFor(settings, () => this.#tokens.current());
    const channel = new Channel(settings.address, credentials, options);
    const health = new HealthClient(settings.address, credentials, { channelOverride: channel });
    return { settings, credentials, channel, health };
  }

  #kmsCall<Req, Res>(method: (client: KmsServiceClient) => UnaryMethod<Req, Res>, request: Req): Promise<Res> {
    const kms = this.#kms;
    const service = this.#kmsService;
    if (!kms || !service) {
      return Promise.reject(
        new SdkError("SDK_CONFIG_INVALID", "SDK option kms_address: not set", { subject: "kms_address" }),
      );
    }
    return this.#unary(kms, method(service), request);
  }

  #assertOpen(): void {
    if (this.#closed) throw new SdkError("SDK_CLOSED", "the client is closed");
  }

  async #unary<Req, Res>(target: Target, method: UnaryMethod<Req, Res>, request: Req): Promise<Res> {
    this.#assertOpen();
    // Pre-flight: renewal and token failures surface here with their SdkError code, before the call starts.
    const token = await this.#tokens.current();
    const metadata = new Metadata();
    if (this.#options.tenantId !== undefined) metadata.set("x-tenant-id", this.#options.tenantId);
    // Secure channels add the header through their call credentials; insecure ones cannot carry call credentials.
    if (token !== undefined && !target.settings.secure) metadata.set("authorization", `Bearer ${token}`);
    return new Promise<Res>((resolve, reject) => {
      method(request, metadata, { deadline: Date.now() + this.#options.callTimeoutMs }, (error, response) => {
        if (error) reject(toSdkError(error, target.settings));
        else resolve(response);
      });
    });
  }
}

/** Validates the options and creates a client (no connection is made until the first call or `connect()`). */
export function createClient(options: ClientOptions): SvcClient {
  return new SvcClient(options);
}
