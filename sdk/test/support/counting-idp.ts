export interface CountingIdp {
  /** Token endpoint URL (plain HTTP on 127.0.0.1, port 0). */
  tokenEndpoint: string;
  /** Arrival times (Date.now()) of the token requests, in order. */
  requests: number[];
  stop(): Promise<void>;
}

/**
 * A token endpoint of the test's own that records every request and answers with `answer`; with `forwardTo` it
 * passes each request on to that real token endpoint (Keycloak) and returns its answer.
 */
export function startCountingIdp(
  options: { answer: () => Response | Promise<Response> } | { forwardTo: string },
): CountingIdp {
  const requests: number[] = [];
  const server = Bun.serve({
    port: 0,
    async fetch(request) {
      requests.push(Date.now());
      if ("answer" in options) return options.answer();
      const upstream = await fetch(options.forwardTo, {
        method: "POST",
        headers: {
          "content-type": request.headers.get("content-type") ?? "application/x-www-form-urlencoded",
          "x-forwarded-proto": request.headers.get("x-forwarded-proto") ?? "http",
        },
        body: await request.text(),
      });
      return new Response(await upstream.text(), {
        status: upstream.status,
        headers: { "content-type": upstream.headers.get("content-type") ?? "application/json" },
      });
    },
  });
  return {
    tokenEndpoint: `http://127.0.0.1:${server.port}/token`,
    requests,
    stop: () => server.stop(true),
  };
}
