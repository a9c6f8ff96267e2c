import { ensureModelTables, type Replica, startComponentAuth, startReplica, TermFence } from "@svc/component-runtime";
import { ShaperServiceService } from "@svc/proto";
import { SQL } from "bun";
import type { Logger } from "pino";
import type { ShaperConfig } from "./config.ts";
import { JobRunner } from "./job-runner.ts";
import { KeyRing } from "./key-ring.ts";
import { SHAPER } from "./profile.ts";
import { shaperImplementation } from "./shaper-service.ts";

/**
 * Starts one shaper replica. Under `k8s-lease` the leader takes office in `leader_terms` and records job results
 * under its term; the graceful stop releases the Lease first, then lets in-flight jobs finish within the grace
 * period (spec: `shaper.terminationGracePeriodSeconds`, preStop releases the Lease).
 */
export async function startShaper(config: ShaperConfig, logger: Logger): Promise<Replica> {
  const auth = await startComponentAuth(config.replica, logger);
  const sql = new SQL({ url: config.pgUrl, max: 4, connectionTimeout: 5 });
  const close = async () => {
    auth.close();
    await sql.close({ timeout: 1 });
  };
  try {
    await ensureModelTables(sql, config.schema);
  } catch (error) {
    await close();
    throw error;
  }
  const fence = new TermFence({
    sql,
    schema: config.schema,
    component: SHAPER.name,
    stallTimeoutMs: config.replica.timings.renewDeadlineSeconds * 1000,
  });
  const keys = new KeyRing();
  const jobs = new JobRunner(sql, config.schema, keys, fence, config.jobWorkMs);
  let termInOffice: number | undefined;
  return startReplica({
    profile: SHAPER,
    config: config.replica,
    logger,
    services: [
      {
        name: "svc.shaper.v1.ShaperService",
        definition: ShaperServiceService,
        implementation: auth.guard(
          ShaperServiceService,
          shaperImplementation({ pod: config.replica.pod, keys, jobs, logger, term: () => termInOffice }),
        ),
      },
    ],
    whileServing: async ({ term, signal }) => {
      if (term === undefined) return;
      await fence.claim(term, config.replica.pod);
      termInOffice = term;
      logger.info({ event: "in-office", term, at: Date.now() }, "shaper leader in office");
      signal.addEventListener("abort", () => {
        termInOffice = undefined;
      });
    },
    close,
    // Two bounded steps after the release (serving work, gRPC drain) share the grace period, with a margin.
    stopStepMs: Math.max(1_000, ((config.graceSeconds - 5) * 1000) / 2),
  }).catch(async (error: unknown) => {
    await close();
    throw error;
  });
}
