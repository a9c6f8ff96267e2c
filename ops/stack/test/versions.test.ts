import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { VERSIONS } from "../src/versions.ts";

const ops = join(import.meta.dir, "..", "..");
const read = (...path: string[]) => readFileSync(join(ops, ...path), "utf8");

test("the version table agrees with the pins in the Go wrapper modules and the Kafka pom", () => {
  expect(read("tools", "kube-apiserver", "go.mod")).toContain(`require k8s.io/kubernetes ${VERSIONS.kubernetes}`);
  expect(read("tools", "etcd", "go.mod")).toContain(`require go.etcd.io/etcd/server/v3 ${VERSIONS.etcd}`);
  expect(read("tools", "minio", "go.mod")).toContain(`require github.com/minio/minio ${VERSIONS.minio}`);
  expect(read("maven", "kafka", "pom.xml")).toContain(`<kafka.version>${VERSIONS.kafka}</kafka.version>`);
});
