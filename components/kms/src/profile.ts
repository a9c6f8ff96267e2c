import type { ComponentProfile } from "@svc/election";

/** The KMS: gRPC with TLS by default; its own audit instance (topic and bucket below) with `--kms-audit`. */
export const KMS: ComponentProfile = {
  name: "kms",
  leaderDuties: [],
  grpcPort: 50090,
};

export const KMS_AUDIT = { topic: "svc.kms.audit.events.v1", bucket: "svc-kms-audit" } as const;
