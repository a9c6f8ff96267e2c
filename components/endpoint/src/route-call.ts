import { type Client, type ServiceError, status } from "@grpc/grpc-js";
import { dutyCounter, statusName } from "@svc/component-runtime/metrics";
import { type ComponentRoute, noLeader } from "./component-route.ts";

const routedCalls = dutyCounter(
  "svc_endpoint_routed_calls_total",
  "Calls endpoint made to a component's serving replica, by component and status code (UNAVAILABLE also when none served)",
  ["component", "code"],
);

/** One gRPC client per address of a component, made on first use. */
export class ClientPool<C extends Client> {
  private readonly clients = new Map<string, C>();

  constructor(private readonly make: (address: string) => C) {}

  get(address: string): C {
    let client = this.clients.get(address);
    if (!client) {
      client = this.make(address);
      this.clients.set(address, client);
    }
    return client;
  }

  close(): void {
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
  }
}

/**
 * Calls the component's serving replica through `route`; UNAVAILABLE at once when none serves, and a call that
 * ends UNAVAILABLE (the leader went away between probes) drops that replica from the route. No retry here: the
 * application sees UNAVAILABLE during the failover window and retries (spec: Errors).
 */
export async function routeCall<C extends Client, R>(
  route: ComponentRoute,
  pool: ClientPool<C>,
  run: (client: C) => Promise<R>,
): Promise<R> {
  const target = route.current();
  if (!target) {
    routedCalls.inc({ component: route.component, code: statusName(status.UNAVAILABLE) });
    throw noLeader(route.component);
  }
  try {
    const answer = await run(pool.get(target.grpc));
    routedCalls.inc({ component: route.component, code: statusName(status.OK) });
    return answer;
  } catch (error) {
    const code = (error as ServiceError).code;
    routedCalls.inc({ component: route.component, code: typeof code === "number" ? statusName(code) : "UNKNOWN" });
    if (code === status.UNAVAILABLE) route.markFailed(target.grpc);
    throw error;
  }
}
