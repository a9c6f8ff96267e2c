import { scrypt } from "node:crypto";

/** scrypt parameters of the key-encryption key, stored beside the wrapped master key. */
export interface KdfParams {
  salt: Buffer;
  n: number;
  r: number;
  p: number;
}

export const DEFAULT_KDF = { n: 2 ** 15, r: 8, p: 1 } as const;

/** KEK = scrypt(passphrase, salt, N, r, p) → 32 bytes (node:crypto). */
export function deriveKek(passphrase: string, params: KdfParams): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(
      passphrase.normalize("NFC"),
      params.salt,
      32,
      { N: params.n, r: params.r, p: params.p, maxmem: 256 * params.n * params.r + 1024 * 1024 },
      (error, key) => (error ? reject(error) : resolve(key)),
    );
  });
}
