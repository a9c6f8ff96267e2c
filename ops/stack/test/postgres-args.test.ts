import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeWithServers } from "@svc/testkit";
import { SQL } from "bun";
import { loadStackConfig } from "../index.ts";
import { createContext } from "../src/context-factory.ts";
import { freePort } from "../src/free-port.ts";
import { silentProgress } from "../src/progress.ts";
import { postgresServerArgs } from "../src/services/postgres.ts";
import { down, readEnvFile, selectServices, up } from "../src/stack.ts";

test("the server starts with the stack file's buffers and WAL room, on 127.0.0.1 and its own socket directory", () => {
  const config = loadStackConfig({}).postgres;
  const args = postgresServerArgs(config, "/data/pg");
  expect(args.slice(0, 4)).toEqual(["-D", "/data/pg", "-p", String(config.port)]);
  expect(args).toContain(`shared_buffers=${config.shared_buffers_mb}MB`);
  expect(args).toContain(`max_wal_size=${config.max_wal_size_mb}MB`);
  expect(args).toContain("listen_addresses=127.0.0.1");
  expect(args).toContain("unix_socket_directories=/data/pg");
  expect(config.shared_buffers_mb).toBeGreaterThan(128);
});

test("SVC_STACK_POSTGRES_SHARED_BUFFERS_MB overrides the file; a value below 16 names the field", () => {
  expect(loadStackConfig({ SVC_STACK_POSTGRES_SHARED_BUFFERS_MB: "256" }).postgres.shared_buffers_mb).toBe(256);
  expect(() => loadStackConfig({ SVC_STACK_POSTGRES_SHARED_BUFFERS_MB: "8" })).toThrow(
    "stack config /postgres/shared_buffers_mb",
  );
});

// Starts a real PostgreSQL: not registered under SVC_TEST_NO_STACK=1 (testkit/README.md).
describeWithServers("postgres settings on a real server", () => {
  test("a private server reports the configured shared_buffers and max_wal_size", async () => {
    const env = {
      ...process.env,
      SVC_STACK_POSTGRES_PORT: String(await freePort()),
      SVC_STACK_POSTGRES_SHARED_BUFFERS_MB: "160",
      SVC_STACK_POSTGRES_MAX_WAL_SIZE_MB: "2048",
    };
    const stateDir = mkdtempSync(join(tmpdir(), "stack-pg-"));
    const ctx = createContext(env, { stateDir, progress: silentProgress });
    try {
      await up(ctx, selectServices(["postgres"]));
      const url = readEnvFile(stateDir)?.SVC_STACK_PG_URL;
      expect(url).toBeDefined();
      const sql = new SQL({ url: url as string, max: 1 });
      try {
        const [buffers] = await sql`SHOW shared_buffers`;
        const [wal] = await sql`SHOW max_wal_size`;
        expect([buffers.shared_buffers, wal.max_wal_size]).toEqual(["160MB", "2GB"]);
      } finally {
        await sql.close();
      }
    } finally {
      await down(ctx, { purge: true });
    }
  });
});
