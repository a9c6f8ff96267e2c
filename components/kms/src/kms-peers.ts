import type { Vault } from "./vault.ts";

/**
 * What one serving process must make true in every process of the KMS before it answers (docs/kms.md "Workers"):
 * the seal, the unseal, and a changed key (rotation, revocation) that no process may keep serving from its cache.
 * With one process that is the process itself; with SVC_KMS_WORKERS > 1 the primary applies it to every worker.
 */
export interface KmsPeers {
  /** Seals every process (master key and cached key material dropped). */
  seal(): Promise<void>;
  /** Unseals every process with `passphrase`; `KMS_PASSPHRASE_WRONG` when it does not unwrap the master key. */
  unseal(passphrase: string): Promise<void>;
  /** Every other process drops its cached copy of the key (the caller already updated its own). */
  keyChanged(tenant: string, name: string): Promise<void>;
}

/** The KMS of one process: the vault is the only one, and the key cache is only this process's. */
export function singleProcess(vault: Vault): KmsPeers {
  return {
    seal: async () => vault.seal(),
    unseal: (passphrase) => vault.unseal(passphrase),
    keyChanged: async () => {},
  };
}
