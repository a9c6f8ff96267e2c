import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeWithServers, rejectionOf, thrownBy } from "@svc/testkit";
import { createContext } from "../src/context-factory.ts";
import { StackError } from "../src/errors.ts";
import { freePort } from "../src/free-port.ts";
import { silentProgress } from "../src/progress.ts";
import { down, readEnvFile, selectServices, status, up } from "../src/stack.ts";

test("selecting a service brings what it starts after", () => {
  expect(selectServices(["kube-apiserver"]).map((s) => s.name)).toEqual(["etcd", "kube-apiserver"]);
  expect(selectServices([]).map((s) => s.name)).toEqual([
    "postgres",
    "etcd",
    "kube-apiserver",
    "kafka",
    "minio",
    "keycloak",
  ]);
});

test("an unknown service name is refused with the known names", () => {
  const error = thrownBy(() => selectServices(["redis"]), StackError);
  expect(error.code).toBe("STACK_CONFIG_INVALID");
  expect(error.message).toContain("keycloak");
});

// These start real etcd and MinIO servers: not registered under SVC_TEST_NO_STACK=1 (testkit/README.md).
describeWithServers("up and down with real servers", () => {
  test("up with one service still names every server in the env file; down stops what it started", async () => {
    const env = {
      ...process.env,
      SVC_STACK_ETCD_PORT: String(await freePort()),
      SVC_STACK_ETCD_PEER_PORT: String(await freePort()),
    };
    const stateDir = mkdtempSync(join(tmpdir(), "stack-test-"));
    const ctx = createContext(env, { stateDir, progress: silentProgress });
    try {
      const result = await up(ctx, selectServices(["etcd"]));
      expect(result.timings.map((t) => t.name)).toEqual(["etcd"]);
      const written = readEnvFile(stateDir);
      expect(written?.SVC_STACK_ETCD_URL).toBe(`http://127.0.0.1:${env.SVC_STACK_ETCD_PORT}`);
      expect(Object.keys(written ?? {})).toEqual(
        expect.arrayContaining(["SVC_STACK_KAFKA_BROKERS", "SVC_STACK_IDP_URL", "SVC_STACK_KUBECONFIG"]),
      );
      expect((await status(ctx)).find((s) => s.name === "etcd")?.state).toBe("ready");
    } finally {
      expect(await down(ctx, { purge: true })).toEqual(["etcd"]);
    }
  });

  test("when one server of a wave fails to start, up fails and stops the ones it started", async () => {
    const port = String(await freePort());
    const env = {
      ...process.env,
      // etcd cannot listen for clients and peers on one port: it exits at start.
      SVC_STACK_ETCD_PORT: port,
      SVC_STACK_ETCD_PEER_PORT: port,
      SVC_STACK_MINIO_PORT: String(await freePort()),
      SVC_STACK_MINIO_CONSOLE_PORT: String(await freePort()),
    };
    const stateDir = mkdtempSync(join(tmpdir(), "stack-test-"));
    const ctx = createContext(env, { stateDir, progress: silentProgress });
    try {
      const error = await rejectionOf(up(ctx, selectServices(["etcd", "minio"])), StackError);
      expect(error.code).toBe("STACK_START_FAILED");
      expect(error.subject).toBe("etcd");
      expect((await status(ctx)).filter((s) => s.state !== "stopped")).toEqual([]);
    } finally {
      await down(ctx, { purge: true });
    }
  });
});
