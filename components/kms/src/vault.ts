import { open, seal } from "./aead.ts";
import { KmsError } from "./errors.ts";
import type { KeyStore, MasterRow } from "./key-store.ts";
import { deriveKek } from "./passphrase-kek.ts";

export const MASTER_AAD = Buffer.from("svc-kms/master/v1");
export const CA_AAD = Buffer.from("svc-kms/ca/v1");

/** Unwraps the master key of `master` with `passphrase`; `KMS_PASSPHRASE_WRONG` when the GCM tag does not hold. */
export async function unwrapMasterKey(master: MasterRow, passphrase: string): Promise<Buffer> {
  const kek = await deriveKek(passphrase, { salt: master.kdfSalt, n: master.kdfN, r: master.kdfR, p: master.kdfP });
  const key = open(kek, master.wrappedMasterKey, MASTER_AAD);
  kek.fill(0);
  if (!key) throw new KmsError("KMS_PASSPHRASE_WRONG", "the passphrase does not unwrap the master key");
  return key;
}

/**
 * The seal (docs/kms.md "Seal model"): holds the master key in memory only while unsealed. `seal()` zeroes and drops
 * it and tells the listeners (the key cache) to drop theirs; every wrap/unwrap while sealed is `KMS_SEALED`.
 */
export class Vault {
  readonly #store: KeyStore;
  #master: Buffer | undefined;
  #caCertPem: string | undefined;
  readonly #onSeal: (() => void)[] = [];

  constructor(store: KeyStore) {
    this.#store = store;
  }

  get sealed(): boolean {
    return this.#master === undefined;
  }

  /** The root CA certificate (public), known once the store was read. */
  get caCertPem(): string {
    if (!this.#caCertPem) throw new KmsError("KMS_NOT_BOOTSTRAPPED", "the key store has no master key");
    return this.#caCertPem;
  }

  onSeal(listener: () => void): void {
    this.#onSeal.push(listener);
  }

  /** Reads the master row and unwraps the master key; a correct passphrase on an unsealed vault changes nothing. */
  async unseal(passphrase: string): Promise<void> {
    const master = await this.#store.master();
    if (!master) throw new KmsError("KMS_NOT_BOOTSTRAPPED", "the key store has no master key: bootstrap it first");
    const key = await unwrapMasterKey(master, passphrase);
    this.#caCertPem = master.caCertPem;
    if (this.#master) {
      key.fill(0);
      return;
    }
    this.#master = key;
  }

  seal(): void {
    this.#master?.fill(0);
    this.#master = undefined;
    for (const listener of this.#onSeal) listener();
  }

  wrap(plaintext: Uint8Array, aad: Uint8Array): Buffer {
    return seal(this.#key(), plaintext, aad);
  }

  /** Unwraps what `wrap` made; a row that does not authenticate is a corrupted store (INTERNAL). */
  unwrap(wrapped: Uint8Array, aad: Uint8Array): Buffer {
    const plain = open(this.#key(), wrapped, aad);
    if (!plain) throw new Error(`stored key material does not authenticate (${Buffer.from(aad).toString()})`);
    return plain;
  }

  /** The root CA's private key (PKCS#8 DER), to issue the server certificate. */
  async caPrivateKey(): Promise<Buffer> {
    const master = await this.#store.master();
    if (!master) throw new KmsError("KMS_NOT_BOOTSTRAPPED", "the key store has no master key");
    return this.unwrap(master.wrappedCaKey, CA_AAD);
  }

  #key(): Buffer {
    if (!this.#master) throw new KmsError("KMS_SEALED", "the KMS is sealed: unseal it before using keys");
    return this.#master;
  }
}
