import { ensureModelTables, type Replica, startComponentAuth, startReplica, TermFence } from "@svc/component-runtime";
import { OrchestratorServiceService } from "@svc/proto";
import { SQL } from "bun";
import type { Logger } from "pino";
import type { OrchestratorConfig } from "./config.ts";
import { orchestratorImplementation } from "./orchestrator-service.ts";
import { PlacementStore } from "./placement-store.ts";
import { ORCHESTRATOR } from "./profile.ts";
import { supervise } from "./supervise.ts";

/** Starts one orchestrator replica: its auth, the model's tables, the placement store, the replica runtime. */
export async function startOrchestrator(config: OrchestratorConfig, logger: Logger): Promise<Replica> {
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
    component: ORCHESTRATOR.name,
    stallTimeoutMs: config.replica.timings.renewDeadlineSeconds * 1000,
  });
  const store = new PlacementStore(config.schema, fence);
  let termInOffice: number | undefined;
  let replica: Replica | undefined;
  const current = () => (replica?.elector.isServing() ? termInOffice : undefined);
  replica = await startReplica({
    profile: ORCHESTRATOR,
    config: config.replica,
    logger,
    services: [
      {
        name: "svc.orchestrator.v1.OrchestratorService",
        definition: OrchestratorServiceService,
        implementation: auth.guard(OrchestratorServiceService, orchestratorImplementation(store, current)),
      },
    ],
    whileServing: ({ term, signal }) =>
      supervise({
        store,
        logger,
        pod: config.replica.pod,
        term,
        signal,
        tickMs: config.tickMs,
        nodeTimeoutMs: config.nodeTimeoutMs,
        inOffice: (term) => {
          termInOffice = term;
        },
      }),
    close,
  }).catch(async (error: unknown) => {
    await close();
    throw error;
  });
  return replica;
}
