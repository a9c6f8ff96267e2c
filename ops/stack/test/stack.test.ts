import { expect, test } from "bun:test";
import { StackError } from "../src/errors.ts";
import { selectServices } from "../src/stack.ts";

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
  expect(() => selectServices(["redis"])).toThrow(StackError);
  try {
    selectServices(["redis"]);
  } catch (error) {
    expect((error as StackError).code).toBe("STACK_CONFIG_INVALID");
    expect((error as StackError).message).toContain("keycloak");
  }
});
