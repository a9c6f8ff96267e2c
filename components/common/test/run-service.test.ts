import { expect, test } from "bun:test";
import { EventEmitter } from "node:events";
import { type RunnableService, runService, SERVICE_EXIT, type ServiceLogger, waitFor } from "../index.ts";

interface Run {
  exits: number[];
  stderr: string[];
  logs: Array<[string, string]>;
  signals: EventEmitter;
  exited: Promise<number>;
}

/** Runs `runService` with recorded exits, stderr, logs and a signal emitter of its own. */
function run(options: { parse?: () => string; start?: () => Promise<RunnableService> }): Run {
  const exits: number[] = [];
  const stderr: string[] = [];
  const logs: Array<[string, string]> = [];
  const signals = new EventEmitter();
  let onExit: (code: number) => void = () => {};
  const exited = new Promise<number>((resolve) => {
    onExit = resolve;
  });
  const logger: ServiceLogger = {
    info: (_, message) => logs.push(["info", message]),
    error: (_, message) => logs.push(["error", message]),
    fatal: (_, message) => logs.push(["fatal", message]),
  };
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
  return { exits, stderr, logs, signals, exited };
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
