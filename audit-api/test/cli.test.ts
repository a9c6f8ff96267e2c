/**
 * The `svc-audit` CLI as a user runs it (a child process, `bun run audit-api/src/cli/main.ts`) against an audit API
 * on the real stack, with a token file from a Keycloak realm of this file: list and export over known data, and
 * forward into an HEC-style HTTP receiver and an RFC 5424 syslog receiver run here, through a kill -9 of the CLI
 * and receiver outages, every record arriving exactly once and in order.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "@svc/common";
import { type SeededRealm, seedTestRealm } from "@svc/testkit";
import { issueToken, readTokenFile, writeTokenFile } from "@svc/token";
import { pino } from "pino";
import { type AuditApi, parseAuditApiConfig, startAuditApi } from "../index.ts";
import { HecReceiver, SyslogReceiver } from "./support/siem-receivers.ts";
import {
  apiEnv,
  byTimeThenId,
  sampleRecord,
  sealBatch,
  storeBatch,
  type TestRecord,
  testStorage,
} from "./support/stored-data.ts";

const CLI = join(import.meta.dir, "../src/cli/main.ts");
const storage = testStorage("cli");
const { names, sql, s3 } = storage;
const T0 = Date.parse("2026-05-04T06:00:00Z");
const START = "2026-05-04T00:00:00Z";
const END = "2026-05-05T00:00:00Z";
const HEC_TOKEN = "hec-token-1234";
const RESULTS = ["OK", "OK", "PERMISSION_DENIED"];

let realm: SeededRealm;
let api: AuditApi;
let dir: string;
let tokenFile: string;
let readOnlyTokenFile: string;
let mine: TestRecord[];

beforeAll(async () => {
  realm = await seedTestRealm("audit-cli");
  const tenant = realm.seed.tenantId;
  await storage.create();
  mine = Array.from({ length: 230 }, (_, i) =>
    sampleRecord(`ev-${String(i).padStart(4, "0")}`, tenant, T0 + Math.floor(i / 2) * 1_500, {
      result: RESULTS[i % 3] as string,
      principal_id: i % 4 === 0 ? "svc-security" : "svc-app",
    }),
  );
  const theirs = Array.from({ length: 20 }, (_, i) => sampleRecord(`zz-${i}`, "other-tenant", T0 + i * 1_000));
  for (let p = 0; p < 2; p++) {
    const part = [...mine.filter((_, i) => i % 2 === p), ...theirs.filter((_, i) => i % 2 === p)];
    await storeBatch(sql, s3, names, sealBatch(names.topic, p, 0n, part));
  }
  mine.sort(byTimeThenId);
  api = await startAuditApi(
    parseAuditApiConfig(apiEnv(names.schema, { SVC_AUTH_ISSUER: realm.issuer, SVC_AUDIT_API_MAX_EXPORT_EVENTS: "50" })),
    { logger: pino({ level: "silent" }) },
  );
  dir = mkdtempSync(join(tmpdir(), "svc-audit-cli-"));
  const { url, realm: name, clientId, userPassword } = realm.seed;
  const issue = (scope: string) =>
    issueToken({ url, realm: name, clientId }, { user: "security", password: userPassword, scope });
  tokenFile = join(dir, "security.json");
  writeTokenFile(tokenFile, await issue("audit:read audit:export"));
  readOnlyTokenFile = join(dir, "read-only.json");
  writeTokenFile(readOnlyTokenFile, await issue("audit:read"));
}, 60_000);

afterAll(async () => {
  await api?.stop();
  await storage.remove();
  await realm?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Run {
  proc: ReturnType<typeof Bun.spawn>;
  stderr: () => string;
  done: Promise<{ exitCode: number; stdout: string; stderr: string }>;
}

/** Starts the CLI; stderr is collected as it comes (forward's progress lines are what a test waits on). */
function spawnCli(args: string[], env: Record<string, string> = {}): Run {
  const proc = Bun.spawn(["bun", "run", CLI, ...args], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      SVC_AUDIT_URL: `http://127.0.0.1:${api.restPort}`,
      SVC_AUDIT_TOKEN_FILE: tokenFile,
      IDP_URL: realm.seed.url,
      IDP_REALM: realm.seed.realm,
      ...env,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  let err = "";
  const reading = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) err += decoder.decode(chunk);
  })();
  const done = (async () => {
    const stdout = await new Response(proc.stdout as ReadableStream<Uint8Array>).text();
    const exitCode = await proc.exited;
    await reading;
    return { exitCode, stdout, stderr: err };
  })();
  return { proc, stderr: () => err, done };
}

const runCli = (args: string[], env?: Record<string, string>) => spawnCli(args, env).done;

/** `promise`'s value, or a failure naming `what` after `timeoutMs` (a bare await would hang to the test's timeout). */
async function within<T>(timeoutMs: number, what: string, promise: Promise<T>): Promise<T> {
  let settled: { value: T } | undefined;
  void promise.then((value) => {
    settled = { value };
  });
  return (await waitFor(what, async () => settled, { timeoutMs, intervalMs: 20 })).value;
}
const range = ["--start-time", START, "--end-time", END];
const lines = (records: readonly TestRecord[]) => records.map((r) => `${JSON.stringify(r)}\n`).join("");

describe("list and export", () => {
  test("list: exact total and every event of the range in order; --max-items then --starting-token continue", async () => {
    const first = await runCli(["list", ...range, "--max-items", "7", "--page-size", "5"]);
    expect(first.exitCode).toBe(0);
    const page = JSON.parse(first.stdout) as { total_count: number; events: TestRecord[]; next_token?: string };
    expect(page.total_count).toBe(mine.length);
    expect(page.events.map((e) => e.id)).toEqual(mine.slice(0, 7).map((r) => r.id));
    expect(page.next_token).toBeString();
    const rest = await runCli(["list", ...range, "--page-size", "100", "--starting-token", page.next_token as string]);
    expect(rest.exitCode).toBe(0);
    const all = JSON.parse(rest.stdout) as { events: TestRecord[]; next_token?: string };
    expect(all.events).toEqual(mine.slice(7));
    expect(all.next_token).toBeUndefined();
  });

  test("list with lookup filters and an offset time (+09:00 is the same instant)", async () => {
    const { exitCode, stdout } = await runCli([
      "list",
      "--start-time",
      "2026-05-04T09:00:00+09:00",
      "--end-time",
      "2026-05-05T09:00:00+09:00",
      "--principal-id",
      "svc-security",
      "--result",
      "PERMISSION_DENIED",
    ]);
    expect(exitCode).toBe(0);
    const expected = mine.filter((r) => r.principal_id === "svc-security" && r.result === "PERMISSION_DENIED");
    expect(expected.length).toBeGreaterThan(0);
    const answer = JSON.parse(stdout) as { total_count: number; events: TestRecord[] };
    expect(answer.total_count).toBe(expected.length);
    expect(answer.events.map((e) => e.id)).toEqual(expected.map((r) => r.id));
  });

  test("export to a file: the stored lines, beyond the unary limit; no .partial left; to stdout the same", async () => {
    const out = join(dir, "export.jsonl");
    const toFile = await runCli(["export", ...range, "--out", out]);
    expect(toFile.exitCode).toBe(0);
    expect(readFileSync(out, "utf8")).toBe(lines(mine));
    expect(existsSync(`${out}.partial`)).toBe(false);
    expect(toFile.stderr).toContain(`exported ${mine.length} events`);
    const toStdout = await runCli(["export", ...range, "--no-progress"]);
    expect(toStdout.exitCode).toBe(0);
    expect(toStdout.stdout).toBe(lines(mine));
  });

  test("failures: a bad time is a usage error; no audit:export; API unreachable; a token without tenant_id", async () => {
    const badTime = await runCli(["list", "--start-time", "yesterday", "--end-time", END]);
    expect(badTime.exitCode).not.toBe(0);
    expect(badTime.stderr).toContain("--start-time");
    const out = join(dir, "refused.jsonl");
    const refused = await runCli(["export", ...range, "--no-progress", "--out", out], {
      SVC_AUDIT_TOKEN_FILE: readOnlyTokenFile,
    });
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain("[AUDIT_CLI_API_FAILED]");
    expect(refused.stderr).toContain("403");
    expect(existsSync(out) || existsSync(`${out}.partial`)).toBe(false);
    const unreachable = await runCli(["list", ...range, "--endpoint-url", "http://127.0.0.1:9"]);
    expect(unreachable.exitCode).toBe(1);
    expect(unreachable.stderr).toContain("[AUDIT_CLI_API_UNREACHABLE]");
    const noTenant = join(dir, "no-tenant.json");
    const claims = Buffer.from(JSON.stringify({ sub: "x" })).toString("base64url");
    writeTokenFile(noTenant, { access_token: `e30.${claims}.sig`, expires_at: Math.floor(Date.now() / 1000) + 600 });
    const tenantless = await runCli(["list", ...range], { SVC_AUDIT_TOKEN_FILE: noTenant });
    expect(tenantless.exitCode).toBe(1);
    expect(tenantless.stderr).toContain("[AUDIT_CLI_TENANT_UNKNOWN]");
  });

  test("an expired access token is refreshed with the file's refresh token and the file rewritten", async () => {
    const file = join(dir, "expiring.json");
    const set = readTokenFile(tokenFile);
    writeTokenFile(file, { ...set, expires_at: Math.floor(Date.now() / 1000) - 5 });
    const { exitCode, stdout } = await runCli(["list", ...range, "--max-items", "1"], { SVC_AUDIT_TOKEN_FILE: file });
    expect(exitCode).toBe(0);
    expect((JSON.parse(stdout) as { total_count: number }).total_count).toBe(mine.length);
    const after = readTokenFile(file);
    expect(after.access_token).not.toBe(set.access_token);
    expect(after.expires_at).toBeGreaterThan(Math.floor(Date.now() / 1000));
  });
});

describe("forward", () => {
  const fast = ["--batch-size", "20", "--max-backoff-seconds", "1"];
  const retries = (run: Run) => (run.stderr().match(/delivery failed/g) ?? []).length;

  test("HTTP (HEC): kill -9 with a batch in flight, the receiver down, then 503s: every record once, in order", async () => {
    const receiver = new HecReceiver(HEC_TOKEN);
    receiver.start();
    const checkpoint = join(dir, "hec.ckpt");
    const args = ["forward", ...range, ...fast, "--to", "http", "--checkpoint", checkpoint];
    const env = { SVC_AUDIT_SIEM_TOKEN: HEC_TOKEN };
    try {
      receiver.holdFrom(60);
      const first = spawnCli([...args, "--http-url", receiver.url], env);
      await within(20_000, "a batch held after 60 records", receiver.held);
      first.proc.kill(9);
      expect((await first.done).exitCode).not.toBe(0);
      receiver.release();
      const beforeOutage = receiver.ids.length;
      expect(beforeOutage).toBeLessThan(mine.length);
      await receiver.stop();

      const second = spawnCli([...args, "--http-url", receiver.url], env);
      await waitFor("two failed deliveries", async () => (retries(second) >= 2 ? true : undefined), {
        timeoutMs: 20_000,
        intervalMs: 50,
      });
      expect(receiver.ids.length).toBe(beforeOutage);
      receiver.mode = "unavailable";
      receiver.start();
      await waitFor("two 503 answers", async () => (receiver.unavailableAnswers >= 2 ? true : undefined), {
        timeoutMs: 20_000,
        intervalMs: 50,
      });
      receiver.mode = "up";
      const result = await second.done;
      expect(result.exitCode).toBe(0);
      expect(receiver.ids).toEqual(mine.map((r) => r.id));
      expect(receiver.lines[0]).toMatchObject({ source: "svc-audit", sourcetype: "svc:audit", time: T0 / 1000 });
      expect(JSON.parse(readFileSync(checkpoint, "utf8")).forwarded).toBe(mine.length);
      // Run again over a finished checkpoint: nothing more is sent.
      const again = await runCli([...args, "--http-url", receiver.url], env);
      expect(again.exitCode).toBe(0);
      expect(receiver.ids).toHaveLength(mine.length);
    } finally {
      await receiver.stop();
    }
  }, 60_000);

  test("syslog (RFC 5424 over TCP): kill -9 while the receiver holds a batch, then the receiver down: every record once", async () => {
    const receiver = new SyslogReceiver();
    await receiver.start();
    const checkpoint = join(dir, "syslog.ckpt");
    const args = ["forward", ...range, ...fast, "--to", "syslog", "--checkpoint", checkpoint];
    try {
      const address = `127.0.0.1:${receiver.port}`;
      receiver.holdFrom(60);
      const first = spawnCli([...args, "--syslog-address", address]);
      const held = await within(20_000, "a connection held after 60 records", receiver.held);
      first.proc.kill(9);
      expect((await first.done).exitCode).not.toBe(0);
      held.destroy();
      const beforeOutage = receiver.ids.length;
      expect(beforeOutage).toBeLessThan(mine.length);
      await receiver.stop();
      receiver.mode = "up";

      const second = spawnCli([...args, "--syslog-address", address]);
      await waitFor("two failed deliveries", async () => (retries(second) >= 2 ? true : undefined), {
        timeoutMs: 20_000,
        intervalMs: 50,
      });
      expect(receiver.ids.length).toBe(beforeOutage);
      await receiver.start();
      const result = await second.done;
      expect(result.exitCode).toBe(0);
      expect(receiver.ids).toEqual(mine.map((r) => r.id));
      const first5424 = receiver.messages[0] as string;
      const record = mine[0] as TestRecord;
      expect(first5424).toStartWith(`<${13 * 8 + (record.result === "OK" ? 6 : 5)}>1 ${record.time} `);
      expect(first5424).toContain(` svc-audit - audit [audit@32473 id="${record.id}" tenant="${record.tenant_id}"`);
      expect(first5424).toEndWith(`] ${JSON.stringify(record)}`);
    } finally {
      await receiver.stop();
    }
  }, 60_000);

  test("a SIEM refusing the batch (wrong token: 403) stops with exit 1 and the checkpoint unmoved", async () => {
    const receiver = new HecReceiver(HEC_TOKEN);
    receiver.start();
    const checkpoint = join(dir, "refused.ckpt");
    try {
      const run = await runCli(
        ["forward", ...range, ...fast, "--to", "http", "--http-url", receiver.url, "--checkpoint", checkpoint],
        { SVC_AUDIT_SIEM_TOKEN: "wrong" },
      );
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toContain("[AUDIT_CLI_SIEM_REFUSED]");
      expect(existsSync(checkpoint)).toBe(false);
      expect(receiver.ids).toHaveLength(0);
    } finally {
      await receiver.stop();
    }
  });

  test("a checkpoint of another forward or not JSON is refused, not resumed", async () => {
    const checkpoint = join(dir, "other.ckpt");
    const base = ["forward", ...range, "--to", "syslog", "--checkpoint", checkpoint];
    writeFileSync(
      checkpoint,
      JSON.stringify({
        version: 1,
        target: "syslog+tcp://127.0.0.1:1",
        filters: {},
        until: END,
        window: { start_time: START, end_time: END },
        page_token: "",
        forwarded: 0,
      }),
    );
    const other = await runCli([...base, "--syslog-address", "127.0.0.1:2"]);
    expect(other.exitCode).toBe(1);
    expect(other.stderr).toContain("[AUDIT_CLI_CHECKPOINT_INVALID]");
    writeFileSync(checkpoint, "{not json");
    const broken = await runCli([...base, "--syslog-address", "127.0.0.1:1"]);
    expect(broken.exitCode).toBe(1);
    expect(broken.stderr).toContain("[AUDIT_CLI_CHECKPOINT_INVALID]");
  });
});
