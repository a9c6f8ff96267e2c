import { type Client, type Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { RuntimeError } from "./errors.ts";

/** A generated unary client method (`client.addCompute`), called with a deadline. */
export type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: { deadline: Date },
  callback: (error: ServiceError | null, response: Res) => void,
) => unknown;

/** Calls one unary method with a deadline; rejects with the grpc-js `ServiceError`. */
export function callUnary<Req, Res>(
  method: UnaryMethod<Req, Res>,
  request: Req,
  metadata: Metadata,
  deadlineMs: number,
): Promise<Res> {
  return new Promise((resolve, reject) =>
    method(request, metadata, { deadline: new Date(Date.now() + deadlineMs) }, (error, response) =>
      error ? reject(error) : resolve(response),
    ),
  );
}

/** A follower's refusal, a replica that is down, or one that did not answer in time: try the next replica. */
const TRY_NEXT = new Set<number>([status.UNAVAILABLE, status.DEADLINE_EXCEEDED]);

/**
 * Reaches the serving replica of an HA component from a fixed list of its replicas' addresses (outside a cluster,
 * where no Service routes by the leader label): calls the replica that answered last; on `UNAVAILABLE` (a
 * follower, spec: Errors) or no answer, tries the next, once around the list. A follower never does the work,
 * so trying it is harmless. When every replica refused, the last error is kept as the cause of `RUNTIME_NO_LEADER`
 * (retryable: a failover is likely under way).
 */
export class ServingReplicaClient<C extends Client> {
  private readonly clients: C[];
  private current = 0;

  constructor(
    readonly component: string,
    readonly addresses: readonly string[],
    makeClient: (address: string) => C,
  ) {
    if (addresses.length === 0) throw new RuntimeError("RUNTIME_CONFIG_INVALID", `${component}: no addresses`);
    this.clients = addresses.map(makeClient);
  }

  async call<R>(run: (client: C) => Promise<R>): Promise<R> {
    let lastError: unknown;
    for (let tried = 0; tried < this.clients.length; tried++) {
      const index = (this.current + tried) % this.clients.length;
      try {
        const result = await run(this.clients[index] as C);
        this.current = index;
        return result;
      } catch (error) {
        lastError = error;
        if (!TRY_NEXT.has((error as ServiceError).code)) throw error;
      }
    }
    throw new RuntimeError(
      "RUNTIME_NO_LEADER",
      `no ${this.component} replica serves (${this.addresses.join(", ")}): ${(lastError as Error)?.message}`,
      { subject: this.component, canRetry: true, cause: lastError },
    );
  }

  close(): void {
    for (const client of this.clients) client.close();
  }
}
