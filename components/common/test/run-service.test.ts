import { expect, test } from "bun:test";
import { EventEmitter } from "node:events";
import { type RunnableService, runService, SERVICE_EXIT, type ServiceLogger, waitFor } from "../index.ts";

interface Run {
  exits: number[];
  stderr: string[];
  logs: Array<[string, string]>;
  /** Each log call's fields, in the order of `logs`. */
  fields: object[];
  signals: EventEmitter;
  exited: Promise<number>;
}

/** Runs `runService` with recorded exits, stderr, logs and a signal emitter of its own. */
function run(options: { parse?: () => string; start?: () => Promise<RunnableService> }): Run {
  const exits: number[] = [];
  const stderr: string[] = [];
  const logs: Array<[string, string]> = [];
  const fields: object[] = [];
  const signals = new EventEmitter();
  let onExit: (code: number) => void = () => {};
  const exited = new Promise<number>((resolve) => {
    onExit = resolve;
  });
  const log = (level: string) => (logged: object, message: string) => {
    logs.push([level, message]);
    fields.push(logged);
  };
  const logger: ServiceLogger = { info: log("info"), error: log("error"), fatal: log("fatal") };
  void runService({
    name: "svc-test",
    parseConfig: options.parse ?? (() => "config"),
    createLogger: () => logger,
    start: options.start ?? (async () => service()),
    exit: (code) => {
      exits.push(code);
      onExit(code);
    },
    stderr: { write: (text: string) => stderr.push(text) },
    signals,
  });
  return { exits, stderr, logs, fields, signals, exited };
}

/** Until runService has registered its `signal` handler (bounded: a run that never does fails the wait). */
const listening = (r: Run, signal: string) =>
  waitFor(`a ${signal} listener`, async () => (r.signals.listenerCount(signal) > 0 ? true : undefined), {
    timeoutMs: 5_000,
    intervalMs: 1,
  });

function service(overrides: Partial<RunnableService> = {}): RunnableService {
  return { stop: async () => {}, done: new Promise<void>(() => {}), ...overrides };
}

test("a bad setting exits 2 with the service's name and the message, and starts nothing", async () => {
  let started = false;
  const r = run({
    parse: () => {
      throw new Error("SVC_X: expected an integer");
    },
    start: async () => {
      started = true;
      return service();
    },
  });
  expect(await r.exited).toBe(SERVICE_EXIT.badConfig);
  expect(r.stderr).toEqual(["svc-test: SVC_X: expected an integer\n"]);
  expect(started).toBe(false);
});

test("a start that fails exits 1 and logs it as fatal", async () => {
  const r = run({
    start: async () => {
      throw new Error("broker unreachable");
    },
  });
  expect(await r.exited).toBe(SERVICE_EXIT.failed);
  expect(r.logs).toContainEqual(["fatal", "svc-test did not start"]);
});

test.each(["SIGTERM", "SIGINT"])("%s stops the service gracefully and exits 0", async (signal) => {
  let stopped = 0;
  let ready: () => void = () => {};
  const running = new Promise<void>((resolve) => {
    ready = resolve;
  });
  const r = run({
    start: async () => {
      ready();
      return service({
        stop: async () => {
          stopped += 1;
        },
      });
    },
  });
  await running;
  await listening(r, signal);
  r.signals.emit(signal);
  expect(await r.exited).toBe(SERVICE_EXIT.ok);
  expect(stopped).toBe(1);
});

test("a stop that fails exits 1 and says the shutdown was incomplete", async () => {
  const r = run({
    start: async () =>
      service({
        stop: async () => {
          throw new Error("drain timed out");
        },
      }),
  });
  await listening(r, "SIGTERM");
  r.signals.emit("SIGTERM");
  expect(await r.exited).toBe(SERVICE_EXIT.failed);
  expect(r.logs).toContainEqual(["error", "shutdown incomplete"]);
});

test("a service that ends by itself exits 0, one that fails exits 1", async () => {
  const ended = run({ start: async () => service({ done: Promise.resolve() }) });
  expect(await ended.exited).toBe(SERVICE_EXIT.ok);
  const failed = run({ start: async () => service({ done: Promise.reject(new Error("bucket gone")) }) });
  expect(await failed.exited).toBe(SERVICE_EXIT.failed);
  expect(failed.logs).toContainEqual(["fatal", "svc-test failed"]);
});

/** A service whose stop settles `done` first, then ends as `failure` says (the queue consumer's shape). */
function settlesDoneOnStop(failure?: Error) {
  let resolveDone: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  let stopCall: Promise<void> | undefined;
  return {
    start: async () =>
      service({
        done,
        stop: () => {
          stopCall = (async () => {
            resolveDone();
            await done;
            if (failure) throw failure;
          })();
          return stopCall;
        },
      }),
    /** Resolves once the stop settled: runService's handlers on it and on done ran before this wait's. */
    stopped: () => stopCall?.catch(() => undefined),
  };
}

test("a stop that fails after settling done exits 1 (not 0) and logs why the shutdown was incomplete", async () => {
  const failure = new Error("batches not written within the shutdown timeout");
  const shape = settlesDoneOnStop(failure);
  const r = run({ start: shape.start });
  await listening(r, "SIGTERM");
  r.signals.emit("SIGTERM");
  expect(await r.exited).toBe(SERVICE_EXIT.failed);
  await shape.stopped();
  expect(r.exits).toEqual([SERVICE_EXIT.failed]);
  const at = r.logs.findIndex(([level, message]) => level === "error" && message === "shutdown incomplete");
  expect(at).toBeGreaterThanOrEqual(0);
  expect(r.fields[at]).toEqual({ err: failure });
});

test("a stop that succeeds after settling done exits 0, once", async () => {
  const shape = settlesDoneOnStop();
  const r = run({ start: shape.start });
  await listening(r, "SIGINT");
  r.signals.emit("SIGINT");
  expect(await r.exited).toBe(SERVICE_EXIT.ok);
  await shape.stopped();
  expect(r.exits).toEqual([SERVICE_EXIT.ok]);
});

test("SIGHUP is logged and ignored: the service keeps running and still stops on SIGTERM", async () => {
  let stopped = 0;
  const r = run({
    start: async () =>
      service({
        stop: async () => {
          stopped += 1;
        },
      }),
  });
  await listening(r, "SIGHUP");
  r.signals.emit("SIGHUP");
  r.signals.emit("SIGHUP"); // every one, not only the first
  const hups = r.logs.flatMap(([level, message], i) =>
    message.startsWith("SIGHUP ignored") ? [[level, r.fields[i]]] : [],
  );
  expect(hups).toEqual([
    ["info", { signal: "SIGHUP" }],
    ["info", { signal: "SIGHUP" }],
  ]);
  expect(r.exits).toEqual([]);
  expect(stopped).toBe(0);
  r.signals.emit("SIGTERM");
  expect(await r.exited).toBe(SERVICE_EXIT.ok);
  expect(stopped).toBe(1);
});
