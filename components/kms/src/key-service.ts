import {
  createPrivateKey,
  createPublicKey,
  createSecretKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
  verify,
} from "node:crypto";
import { IV_BYTES, open, seal, TAG_BYTES } from "./aead.ts";
import { invalidArgument, KmsError } from "./errors.ts";
import type { KeyKindName, KeyRow, KeyStore, VersionRow } from "./key-store.ts";
import type { Vault } from "./vault.ts";

export const KEY_NAME = /^[a-z0-9][a-z0-9._-]{0,127}$/;
export const MAX_PAYLOAD_BYTES = 64 * 1024;
const CIPHERTEXT_FORMAT = 0x01;
const HEADER_BYTES = 1 + 4;

interface Material {
  secret?: KeyObject;
  privateKey?: KeyObject;
  publicKey?: KeyObject;
  publicKeyPem?: string;
}

interface CachedKey {
  row: KeyRow;
  versions: Map<number, Material>;
}

const materialAad = (tenant: string, name: string, version: number) =>
  Buffer.from(`svc-kms/key/v1|${tenant}|${name}|${version}`);

function dataAad(tenant: string, name: string, version: number, associated: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(`svc-kms/data/v1|${tenant}|${name}|${version}`), Buffer.of(0), associated]);
}

/** New material of `kind`: the bytes to wrap (raw AES key or PKCS#8 DER) and the public key PEM of a signing key. */
function newMaterial(kind: KeyKindName): { secret: Buffer; publicKeyPem: string | null } {
  if (kind === "AES_256_GCM") return { secret: randomBytes(32), publicKeyPem: null };
  const pair =
    kind === "ECDSA_P256" ? generateKeyPairSync("ec", { namedCurve: "P-256" }) : generateKeyPairSync("ed25519");
  return {
    secret: pair.privateKey.export({ type: "pkcs8", format: "der" }),
    publicKeyPem: pair.publicKey.export({ type: "spki", format: "pem" }) as string,
  };
}

function toMaterial(kind: KeyKindName, secret: Buffer, publicKeyPem: string | null): Material {
  if (kind === "AES_256_GCM") {
    const material = { secret: createSecretKey(secret) };
    secret.fill(0);
    return material;
  }
  const privateKey = createPrivateKey({ key: secret, format: "der", type: "pkcs8" });
  secret.fill(0);
  const pem = publicKeyPem ?? (createPublicKey(privateKey).export({ type: "spki", format: "pem" }) as string);
  return { privateKey, publicKey: createPublicKey(pem), publicKeyPem: pem };
}

const signAlgorithm = (kind: KeyKindName) => (kind === "ECDSA_P256" ? "sha256" : null);

function checkName(name: string): void {
  if (!KEY_NAME.test(name))
    throw invalidArgument("name", `must match ${KEY_NAME.source} (got ${JSON.stringify(name)})`);
}

function checkSize(field: string, bytes: Uint8Array): void {
  if (bytes.length > MAX_PAYLOAD_BYTES) {
    throw invalidArgument(field, `at most ${MAX_PAYLOAD_BYTES} bytes (got ${bytes.length})`);
  }
}

/**
 * The keys of every tenant (docs/kms.md "Keys"): generation, rotation, revocation and use. Unwrapped material is
 * cached in memory per key version while unsealed and dropped on seal. One replica (docs/kms.md): the cache trusts
 * that every change goes through this process.
 */
export class KeyService {
  readonly #store: KeyStore;
  readonly #vault: Vault;
  readonly #cache = new Map<string, Promise<CachedKey>>();

  constructor(store: KeyStore, vault: Vault) {
    this.#store = store;
    this.#vault = vault;
    vault.onSeal(() => this.#cache.clear());
  }

  async generate(tenant: string, name: string, kind: KeyKindName): Promise<KeyRow> {
    checkName(name);
    this.#assertUnsealed();
    const fresh = newMaterial(kind);
    const wrapped = this.#vault.wrap(fresh.secret, materialAad(tenant, name, 1));
    const row = await this.#store.createKey(tenant, name, kind, {
      version: 1,
      wrappedMaterial: wrapped,
      publicKeyPem: fresh.publicKeyPem,
    });
    this.#cache.set(
      `${tenant}\0${name}`,
      Promise.resolve({ row, versions: new Map([[1, toMaterial(kind, fresh.secret, fresh.publicKeyPem)]]) }),
    );
    return row;
  }

  async rotate(tenant: string, name: string): Promise<KeyRow> {
    checkName(name);
    this.#assertUnsealed();
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const cached = await this.#load(tenant, name);
      this.#assertEnabled(cached.row);
      const version = cached.row.primaryVersion + 1;
      const fresh = newMaterial(cached.row.kind);
      const next: VersionRow = {
        version,
        wrappedMaterial: this.#vault.wrap(fresh.secret, materialAad(tenant, name, version)),
        publicKeyPem: fresh.publicKeyPem,
      };
      const row = await this.#store.addVersion(tenant, name, next);
      if (row) {
        cached.versions.set(version, toMaterial(row.kind, fresh.secret, fresh.publicKeyPem));
        cached.row = row;
        return row;
      }
      fresh.secret.fill(0);
      this.#cache.delete(`${tenant}\0${name}`); // changed under us (another rotation or a revocation): read again
    }
    throw new KmsError("KMS_STORE_UNAVAILABLE", `key ${name} kept changing during rotation`, { canRetry: true });
  }

  /** Revokes; needs no key material, so it also works while sealed. */
  async revoke(tenant: string, name: string): Promise<KeyRow> {
    checkName(name);
    const row = await this.#store.revoke(tenant, name);
    if (!row) {
      const existing = await this.#store.key(tenant, name);
      if (!existing) throw notFound(name);
      throw revoked(name);
    }
    this.#cache.delete(`${tenant}\0${name}`);
    return row;
  }

  list(tenant: string): Promise<KeyRow[]> {
    return this.#store.keys(tenant);
  }

  async encrypt(
    tenant: string,
    name: string,
    plaintext: Uint8Array,
    associated: Uint8Array,
  ): Promise<{ ciphertext: Buffer; version: number }> {
    checkName(name);
    checkSize("plaintext", plaintext);
    const { row, material } = await this.#use(tenant, name, "AES_256_GCM", 0);
    const version = row.primaryVersion;
    const header = Buffer.alloc(HEADER_BYTES);
    header.writeUInt8(CIPHERTEXT_FORMAT, 0);
    header.writeUInt32BE(version, 1);
    const body = seal(material.secret as KeyObject, plaintext, dataAad(tenant, name, version, associated));
    return { ciphertext: Buffer.concat([header, body]), version };
  }

  async decrypt(
    tenant: string,
    name: string,
    ciphertext: Uint8Array,
    associated: Uint8Array,
  ): Promise<{ plaintext: Buffer; version: number }> {
    checkName(name);
    if (ciphertext.length < HEADER_BYTES + IV_BYTES + TAG_BYTES || ciphertext[0] !== CIPHERTEXT_FORMAT) {
      throw invalidArgument("ciphertext", "not a ciphertext of this KMS");
    }
    const bytes = Buffer.from(ciphertext.buffer, ciphertext.byteOffset, ciphertext.byteLength);
    const version = bytes.readUInt32BE(1);
    const { material } = await this.#use(tenant, name, "AES_256_GCM", version);
    const plaintext = open(
      material.secret as KeyObject,
      bytes.subarray(HEADER_BYTES),
      dataAad(tenant, name, version, associated),
    );
    if (!plaintext) {
      throw new KmsError("KMS_DECRYPT_FAILED", `the ciphertext does not authenticate under key ${name} v${version}`);
    }
    return { plaintext, version };
  }

  async sign(tenant: string, name: string, message: Uint8Array): Promise<{ signature: Buffer; version: number }> {
    checkName(name);
    checkSize("message", message);
    const { row, material } = await this.#use(tenant, name, "signing", 0);
    return {
      signature: sign(signAlgorithm(row.kind), message, material.privateKey as KeyObject),
      version: row.primaryVersion,
    };
  }

  async verify(tenant: string, name: string, message: Uint8Array, signature: Uint8Array, version: number) {
    checkName(name);
    checkSize("message", message);
    if (version < 1) throw invalidArgument("version", "the version that signed (as Sign returned it)");
    const { row, material } = await this.#use(tenant, name, "signing", version);
    return verify(signAlgorithm(row.kind), message, material.publicKey as KeyObject, signature);
  }

  async publicKey(tenant: string, name: string, version: number) {
    checkName(name);
    const { row, material, version: used } = await this.#use(tenant, name, "signing", version);
    return { publicKeyPem: material.publicKeyPem as string, version: used, kind: row.kind };
  }

  /** The enabled key's material of `version` (0 = primary), of the wanted kind. */
  async #use(tenant: string, name: string, want: "AES_256_GCM" | "signing", version: number) {
    this.#assertUnsealed();
    const cached = await this.#load(tenant, name);
    const { row } = cached;
    this.#assertEnabled(row);
    if (want === "AES_256_GCM" ? row.kind !== "AES_256_GCM" : row.kind === "AES_256_GCM") {
      throw new KmsError(
        "KMS_WRONG_KEY_KIND",
        `key ${name} is ${row.kind}: ${want === "AES_256_GCM" ? "not an encryption key" : "not a signing key"}`,
        { subject: name },
      );
    }
    const used = version === 0 ? row.primaryVersion : version;
    const material = cached.versions.get(used);
    if (!material) throw new KmsError("KMS_KEY_NOT_FOUND", `key ${name} has no version ${used}`, { subject: name });
    return { row, material, version: used };
  }

  #load(tenant: string, name: string): Promise<CachedKey> {
    const id = `${tenant}\0${name}`;
    let entry = this.#cache.get(id);
    if (!entry) {
      entry = this.#read(tenant, name);
      this.#cache.set(id, entry);
      entry.catch(() => {
        if (this.#cache.get(id) === entry) this.#cache.delete(id);
      });
    }
    return entry;
  }

  async #read(tenant: string, name: string): Promise<CachedKey> {
    const row = await this.#store.key(tenant, name);
    if (!row) throw notFound(name);
    const versions = new Map<number, Material>();
    if (row.state === "ENABLED") {
      for (const stored of await this.#store.versions(tenant, name)) {
        const secret = this.#vault.unwrap(stored.wrappedMaterial, materialAad(tenant, name, stored.version));
        versions.set(stored.version, toMaterial(row.kind, secret, stored.publicKeyPem));
      }
    }
    return { row, versions };
  }

  #assertUnsealed(): void {
    if (this.#vault.sealed) throw new KmsError("KMS_SEALED", "the KMS is sealed: unseal it before using keys");
  }

  #assertEnabled(row: KeyRow): void {
    if (row.state !== "ENABLED") throw revoked(row.name);
  }
}

const notFound = (name: string) =>
  new KmsError("KMS_KEY_NOT_FOUND", `no key ${name} in the caller's tenant`, { subject: name });
const revoked = (name: string) =>
  new KmsError("KMS_KEY_REVOKED", `key ${name} is revoked: it can no longer be used`, { subject: name });
