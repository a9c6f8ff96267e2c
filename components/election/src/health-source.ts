import type { RoleSource } from "@svc/health";
import type { Elector } from "./elector.ts";

/**
 * The elector as `@svc/health`'s role source: `HealthState.follow(healthSource(elector))` makes `/health/ready`
 * and `/health/whoami` read the leadership at each request (a passed renew deadline shows at once).
 */
export function healthSource(elector: Elector): RoleSource {
  return {
    role: () => {
      const { role } = elector.snapshot();
      return role === "active" ? "active" : elector.isServing() ? "leader" : "follower";
    },
    holder: () => elector.snapshot().holder,
    term: () => elector.snapshot().term,
  };
}
