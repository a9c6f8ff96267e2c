import { KeyKind, type KeyMetadata, KeyState } from "@svc/proto";
import { invalidArgument } from "./errors.ts";
import type { KeyKindName, KeyRow } from "./key-store.ts";

const KIND_TO_PROTO: Record<KeyKindName, KeyKind> = {
  AES_256_GCM: KeyKind.KEY_KIND_AES_256_GCM,
  ECDSA_P256: KeyKind.KEY_KIND_ECDSA_P256,
  ED25519: KeyKind.KEY_KIND_ED25519,
};

export const kindToProto = (kind: KeyKindName): KeyKind => KIND_TO_PROTO[kind];

/** The stored kind of a requested `KeyKind`; unset or unknown is `KMS_INVALID_ARGUMENT`. */
export function kindFromProto(kind: KeyKind): KeyKindName {
  const found = (Object.entries(KIND_TO_PROTO) as [KeyKindName, KeyKind][]).find(([, value]) => value === kind);
  if (!found) throw invalidArgument("kind", "one of KEY_KIND_AES_256_GCM, KEY_KIND_ECDSA_P256, KEY_KIND_ED25519");
  return found[0];
}

/** A stored key as `svc.kms.v1.KeyMetadata` (never material). */
export function keyMetadata(row: KeyRow): KeyMetadata {
  return {
    name: row.name,
    kind: kindToProto(row.kind),
    state: row.state === "ENABLED" ? KeyState.KEY_STATE_ENABLED : KeyState.KEY_STATE_REVOKED,
    primaryVersion: row.primaryVersion,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    revokedAt: row.revokedAt ? row.revokedAt.toISOString() : "",
  };
}

/** The same as JSON for `/admin/keys` (snake_case, names of the enums). */
export function keyMetadataJson(row: KeyRow): Record<string, unknown> {
  return {
    name: row.name,
    kind: row.kind,
    state: row.state,
    primary_version: row.primaryVersion,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    revoked_at: row.revokedAt ? row.revokedAt.toISOString() : null,
  };
}
