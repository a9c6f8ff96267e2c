import type { ComponentProfile } from "@svc/election";

/** The KMS: one replica (no election), gRPC with TLS by default on the spec's port. */
export const KMS: ComponentProfile = {
  name: "kms",
  leaderDuties: [],
  grpcPort: 50090,
};
