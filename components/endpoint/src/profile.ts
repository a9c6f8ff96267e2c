import type { ComponentProfile } from "@svc/election";

/** `endpoint`: stateless gRPC gateway; no election, every ready replica serves; readiness gated on `backend`. */
export const ENDPOINT: ComponentProfile = {
  name: "endpoint",
  leaderDuties: [],
  grpcPort: 50050,
};

/** The components whose state `endpoint` gates its readiness on (spec: Limits). */
export const ENDPOINT_READINESS_GATE = ["backend"] as const;
