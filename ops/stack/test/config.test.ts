import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { thrownBy } from "@svc/testkit";
import { DEFAULT_CONFIG_PATH, loadStackConfig } from "../src/config.ts";
import { StackError } from "../src/errors.ts";

const errorOf = (run: () => unknown) => thrownBy(run, StackError);

describe("stack config", () => {
  test("the committed defaults load, with the spec's IdP host port", () => {
    const config = loadStackConfig({});
    expect(config.keycloak.port).toBe(8082);
    expect(config.minio.buckets).toEqual(["svc-audit", "svc-kms-audit"]);
  });

  test("SVC_STACK_<SECTION>_<KEY> and IDP_BOOTSTRAP_ADMIN_PASSWORD override the file", () => {
    const config = loadStackConfig({ SVC_STACK_KAFKA_PORT: "19092", IDP_BOOTSTRAP_ADMIN_PASSWORD: "rotated-pw" });
    expect(config.kafka.port).toBe(19092);
    expect(config.keycloak.admin_password).toBe("rotated-pw");
  });

  test("a bad value names its field and is refused", () => {
    const error = errorOf(() => loadStackConfig({ SVC_STACK_KAFKA_PORT: "not-a-port" }));
    expect(error.code).toBe("STACK_CONFIG_INVALID");
    expect(error.subject).toBe("/kafka/port");
  });

  test("an unknown field is refused", () => {
    const dir = mkdtempSync(join(tmpdir(), "stack-config-"));
    const file = join(dir, "stack.toml");
    writeFileSync(file, `${readFileSync(DEFAULT_CONFIG_PATH, "utf8")}\n[extra]\nx = 1\n`);
    const error = errorOf(() => loadStackConfig({}, file));
    expect(error.code).toBe("STACK_CONFIG_INVALID");
  });

  test("a missing config file is a config error naming the path", () => {
    const error = errorOf(() => loadStackConfig({}, "/nonexistent/stack.toml"));
    expect(error.code).toBe("STACK_CONFIG_INVALID");
    expect(error.subject).toBe("/nonexistent/stack.toml");
  });
});
