/**
 * The KMS's audited kinds (spec: Events → Audited kinds) and the stable `action` each is recorded with. The
 * action names are a contract with whoever reads the records (the audit API's filters, a SIEM): change them never.
 */
export const KMS_EVENT_ACTIONS = {
  "key-generation": "kms.key.generate",
  unseal: "kms.unseal",
  seal: "kms.seal",
  rotation: "kms.key.rotate",
  revocation: "kms.key.revoke",
  "permission-denied": "kms.permission_denied",
  bootstrap: "kms.bootstrap",
} as const;

export type KmsEventKind = keyof typeof KMS_EVENT_ACTIONS;

export const KMS_EVENT_KINDS = Object.keys(KMS_EVENT_ACTIONS) as KmsEventKind[];
