import type { SQL } from "bun";
import { KmsError } from "./errors.ts";

/** The one `master` row: the wrapped master key, its KDF parameters, and the root CA. */
export interface MasterRow {
  kdfSalt: Buffer;
  kdfN: number;
  kdfR: number;
  kdfP: number;
  wrappedMasterKey: Buffer;
  caCertPem: string;
  wrappedCaKey: Buffer;
}

export type KeyKindName = "AES_256_GCM" | "ECDSA_P256" | "ED25519";
export type KeyStateName = "ENABLED" | "REVOKED";

export interface KeyRow {
  tenantId: string;
  name: string;
  kind: KeyKindName;
  state: KeyStateName;
  primaryVersion: number;
  createdAt: Date;
  updatedAt: Date;
  revokedAt: Date | null;
}

export interface VersionRow {
  version: number;
  wrappedMaterial: Buffer;
  publicKeyPem: string | null;
}

const bytes = (value: unknown): Buffer => Buffer.from(value as Uint8Array);

function keyRow(row: Record<string, unknown>): KeyRow {
  return {
    tenantId: row.tenant_id as string,
    name: row.name as string,
    kind: row.kind as KeyKindName,
    state: row.state as KeyStateName,
    primaryVersion: Number(row.primary_version),
    createdAt: new Date(row.created_at as string),
    updatedAt: new Date(row.updated_at as string),
    revokedAt: row.revoked_at ? new Date(row.revoked_at as string) : null,
  };
}

/** PostgreSQL errors become `KMS_STORE_UNAVAILABLE` (`canRetry`); KMS errors pass through. */
async function guarded<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (cause) {
    if (cause instanceof KmsError) throw cause;
    throw new KmsError("KMS_STORE_UNAVAILABLE", `key store: ${what} failed: ${(cause as Error).message}`, {
      canRetry: true,
      cause,
    });
  }
}

/**
 * The key store (docs/kms.md "Storage"): three tables in one schema. Every byte of key material it holds is
 * already wrapped under the master key; it never sees a plaintext key.
 */
export class KeyStore {
  readonly #sql: SQL;
  readonly #s: string;

  constructor(sql: SQL, schema: string) {
    this.#sql = sql;
    this.#s = `"${schema}"`;
  }

  /** Creates the schema and tables when missing. */
  migrate(): Promise<void> {
    const s = this.#s;
    return guarded("migrate", async () => {
      await this.#sql.unsafe(`CREATE SCHEMA IF NOT EXISTS ${s}`);
      await this.#sql.unsafe(`
        CREATE TABLE IF NOT EXISTS ${s}.master (
          id smallint PRIMARY KEY CHECK (id = 1),
          kdf_salt bytea NOT NULL, kdf_n integer NOT NULL, kdf_r integer NOT NULL, kdf_p integer NOT NULL,
          wrapped_master_key bytea NOT NULL,
          ca_cert_pem text NOT NULL,
          wrapped_ca_key bytea NOT NULL,
          created_at timestamptz NOT NULL DEFAULT now()
        )`);
      await this.#sql.unsafe(`
        CREATE TABLE IF NOT EXISTS ${s}.keys (
          tenant_id text NOT NULL, name text NOT NULL,
          kind text NOT NULL, state text NOT NULL, primary_version integer NOT NULL,
          created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now(),
          revoked_at timestamptz,
          PRIMARY KEY (tenant_id, name)
        )`);
      await this.#sql.unsafe(`
        CREATE TABLE IF NOT EXISTS ${s}.key_versions (
          tenant_id text NOT NULL, name text NOT NULL, version integer NOT NULL,
          wrapped_material bytea NOT NULL, public_key_pem text,
          created_at timestamptz NOT NULL DEFAULT now(),
          PRIMARY KEY (tenant_id, name, version),
          FOREIGN KEY (tenant_id, name) REFERENCES ${s}.keys (tenant_id, name)
        )`);
    });
  }

  async master(): Promise<MasterRow | undefined> {
    const rows = await guarded("read master", () => this.#sql.unsafe(`SELECT * FROM ${this.#s}.master WHERE id = 1`));
    const row = rows[0] as Record<string, unknown> | undefined;
    if (!row) return undefined;
    return {
      kdfSalt: bytes(row.kdf_salt),
      kdfN: Number(row.kdf_n),
      kdfR: Number(row.kdf_r),
      kdfP: Number(row.kdf_p),
      wrappedMasterKey: bytes(row.wrapped_master_key),
      caCertPem: row.ca_cert_pem as string,
      wrappedCaKey: bytes(row.wrapped_ca_key),
    };
  }

  /** Inserts the master row once; false when one exists already (a second bootstrap). */
  async insertMaster(master: MasterRow): Promise<boolean> {
    const rows = await guarded("bootstrap", () =>
      this.#sql.unsafe(
        `INSERT INTO ${this.#s}.master (id, kdf_salt, kdf_n, kdf_r, kdf_p, wrapped_master_key, ca_cert_pem, wrapped_ca_key)
         VALUES (1, $1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING RETURNING id`,
        [
          master.kdfSalt,
          master.kdfN,
          master.kdfR,
          master.kdfP,
          master.wrappedMasterKey,
          master.caCertPem,
          master.wrappedCaKey,
        ],
      ),
    );
    return rows.length === 1;
  }

  async key(tenantId: string, name: string): Promise<KeyRow | undefined> {
    const rows = await guarded("read key", () =>
      this.#sql.unsafe(`SELECT * FROM ${this.#s}.keys WHERE tenant_id = $1 AND name = $2`, [tenantId, name]),
    );
    const row = rows[0] as Record<string, unknown> | undefined;
    return row ? keyRow(row) : undefined;
  }

  async keys(tenantId: string): Promise<KeyRow[]> {
    const rows = await guarded("list keys", () =>
      this.#sql.unsafe(`SELECT * FROM ${this.#s}.keys WHERE tenant_id = $1 ORDER BY name`, [tenantId]),
    );
    return (rows as Record<string, unknown>[]).map(keyRow);
  }

  async versions(tenantId: string, name: string): Promise<VersionRow[]> {
    const rows = await guarded("read key versions", () =>
      this.#sql.unsafe(
        `SELECT version, wrapped_material, public_key_pem FROM ${this.#s}.key_versions
          WHERE tenant_id = $1 AND name = $2 ORDER BY version`,
        [tenantId, name],
      ),
    );
    return (rows as Record<string, unknown>[]).map((row) => ({
      version: Number(row.version),
      wrappedMaterial: bytes(row.wrapped_material),
      publicKeyPem: (row.public_key_pem as string | null) ?? null,
    }));
  }

  /** A new key with its version 1, in one transaction; `KMS_KEY_EXISTS` when the name is taken. */
  async createKey(tenantId: string, name: string, kind: KeyKindName, first: VersionRow): Promise<KeyRow> {
    const s = this.#s;
    return guarded("create key", () =>
      this.#sql.begin(async (tx) => {
        const rows = await tx.unsafe(
          `INSERT INTO ${s}.keys (tenant_id, name, kind, state, primary_version) VALUES ($1, $2, $3, 'ENABLED', 1)
           ON CONFLICT (tenant_id, name) DO NOTHING RETURNING *`,
          [tenantId, name, kind],
        );
        const row = rows[0] as Record<string, unknown> | undefined;
        if (!row) throw new KmsError("KMS_KEY_EXISTS", `key ${name} exists`, { subject: name });
        await tx.unsafe(
          `INSERT INTO ${s}.key_versions (tenant_id, name, version, wrapped_material, public_key_pem)
           VALUES ($1, $2, 1, $3, $4)`,
          [tenantId, name, first.wrappedMaterial, first.publicKeyPem],
        );
        return keyRow(row);
      }),
    );
  }

  /**
   * Adds version `next.version` and makes it primary, only if the key is enabled and its primary is the one before
   * (a concurrent rotation makes this one fail rather than skip a version).
   */
  async addVersion(tenantId: string, name: string, next: VersionRow): Promise<KeyRow | undefined> {
    const s = this.#s;
    return guarded("rotate key", () =>
      this.#sql.begin(async (tx) => {
        const rows = await tx.unsafe(
          `UPDATE ${s}.keys SET primary_version = $3, updated_at = now()
            WHERE tenant_id = $1 AND name = $2 AND state = 'ENABLED' AND primary_version = $3 - 1 RETURNING *`,
          [tenantId, name, next.version],
        );
        const row = rows[0] as Record<string, unknown> | undefined;
        if (!row) return undefined;
        await tx.unsafe(
          `INSERT INTO ${s}.key_versions (tenant_id, name, version, wrapped_material, public_key_pem)
           VALUES ($1, $2, $3, $4, $5)`,
          [tenantId, name, next.version, next.wrappedMaterial, next.publicKeyPem],
        );
        return keyRow(row);
      }),
    );
  }

  async revoke(tenantId: string, name: string): Promise<KeyRow | undefined> {
    const rows = await guarded("revoke key", () =>
      this.#sql.unsafe(
        `UPDATE ${this.#s}.keys SET state = 'REVOKED', revoked_at = now(), updated_at = now()
          WHERE tenant_id = $1 AND name = $2 AND state = 'ENABLED' RETURNING *`,
        [tenantId, name],
      ),
    );
    const row = rows[0] as Record<string, unknown> | undefined;
    return row ? keyRow(row) : undefined;
  }
}
