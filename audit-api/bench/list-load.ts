/**
 * The list-rate load of `bench:api`, in a process of its own (as a SIEM's or a console's client would be): until
 * `seconds` have passed, `concurrency` loops each POST a page of 100 from a random start inside
 * `[start, start + span - window)` to `start + span`. Each answer must be HTTP 200 and is read whole, then dropped
 * (as h2load or wrk would: a load generator does not parse what it measures). The first failure ends the run.
 *
 * Its settings come on standard input as JSON (the bearer token stays off the command line); its result goes to
 * standard output as one JSON line: `{ calls, perSecond, cpuMs, failure? }` (`perSecond`: calls answered in each
 * second of the run; `cpuMs`: this process's CPU, user + system).
 */
export interface ListLoadSettings {
  url: string;
  headers: Record<string, string>;
  /** Epoch ms of the records' first and the span they cover; `window`: the ms left after the last start. */
  start: number;
  span: number;
  window: number;
  concurrency: number;
  seconds: number;
}

export interface ListLoadResult {
  calls: number;
  /** Calls answered in each second of the run (the last one may be partial). */
  perSecond: number[];
  cpuMs: number;
  failure?: string;
}

async function run(settings: ListLoadSettings): Promise<ListLoadResult> {
  const { url, headers, start, span, window, concurrency, seconds } = settings;
  const end = new Date(start + span).toISOString();
  const cpu = process.cpuUsage();
  const began = performance.now();
  const until = began + seconds * 1000;
  let calls = 0;
  const perSecond = Array.from({ length: seconds }, () => 0);
  let failure: string | undefined;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (failure === undefined && performance.now() < until) {
        const from = new Date(start + Math.floor(Math.random() * (span - window))).toISOString();
        const body = JSON.stringify({ start_time: from, end_time: end, page_size: 100 });
        try {
          const response = await fetch(url, { method: "POST", headers, body });
          const answer = await response.arrayBuffer();
          if (response.status !== 200) {
            failure ??= `HTTP ${response.status}: ${new TextDecoder().decode(answer).slice(0, 300)}`;
            return;
          }
          calls++;
          const second = Math.min(seconds - 1, Math.floor((performance.now() - began) / 1000));
          perSecond[second] = (perSecond[second] ?? 0) + 1;
        } catch (error) {
          failure ??= String(error);
          return;
        }
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  return {
    calls,
    perSecond,
    cpuMs: (used.user + used.system) / 1000,
    ...(failure === undefined ? {} : { failure }),
  };
}

if (import.meta.main) {
  const settings = (await Bun.stdin.json()) as ListLoadSettings;
  process.stdout.write(`${JSON.stringify(await run(settings))}\n`);
}
