import { createCipheriv, createDecipheriv, type KeyObject, randomBytes } from "node:crypto";

export const IV_BYTES = 12;
export const TAG_BYTES = 16;

/** AES-256-GCM (node:crypto): `iv ‖ ciphertext ‖ tag`, bound to `aad`. */
export function seal(key: KeyObject | Buffer, plaintext: Uint8Array, aad: Uint8Array): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]);
}

/** Opens what `seal` made; `undefined` when it does not authenticate (wrong key, aad, or altered bytes). */
export function open(key: KeyObject | Buffer, sealed: Uint8Array, aad: Uint8Array): Buffer | undefined {
  if (sealed.length < IV_BYTES + TAG_BYTES) return undefined;
  const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, IV_BYTES));
  decipher.setAAD(aad);
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
  } catch {
    return undefined;
  }
}
