import { randomBytes } from "node:crypto";
import { seal } from "./aead.ts";
import { createRootCa } from "./certificates.ts";
import { KmsError } from "./errors.ts";
import type { KeyStore } from "./key-store.ts";
import { DEFAULT_KDF, deriveKek } from "./passphrase-kek.ts";
import { CA_AAD, MASTER_AAD } from "./vault.ts";

/**
 * Bootstrap (docs/kms.md "Seal model"): on an empty store, makes the master key (wrapped under the passphrase's KEK)
 * and the root CA (its private key wrapped under the master key) and inserts them as the one `master` row. A store
 * that has the row refuses with `KMS_ALREADY_BOOTSTRAPPED`, also when two bootstraps race (the insert decides).
 */
export async function bootstrapStore(store: KeyStore, passphrase: string): Promise<void> {
  if (await store.master()) throw alreadyBootstrapped();
  const salt = randomBytes(16);
  const kek = await deriveKek(passphrase, { salt, ...DEFAULT_KDF });
  const master = randomBytes(32);
  const ca = await createRootCa();
  try {
    const inserted = await store.insertMaster({
      kdfSalt: salt,
      kdfN: DEFAULT_KDF.n,
      kdfR: DEFAULT_KDF.r,
      kdfP: DEFAULT_KDF.p,
      wrappedMasterKey: seal(kek, master, MASTER_AAD),
      caCertPem: ca.certPem,
      wrappedCaKey: seal(master, ca.privateKeyPkcs8, CA_AAD),
    });
    if (!inserted) throw alreadyBootstrapped();
  } finally {
    kek.fill(0);
    master.fill(0);
    ca.privateKeyPkcs8.fill(0);
  }
}

const alreadyBootstrapped = () =>
  new KmsError("KMS_ALREADY_BOOTSTRAPPED", "the key store is bootstrapped already: a second bootstrap is refused");
