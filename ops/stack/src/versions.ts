/**
 * Versions the local stack pins. The Go pins live in ops/tools/<name>/go.mod, Kafka's in
 * ops/maven/kafka/pom.xml; test/versions.test.ts checks those files agree with this table.
 */
export const VERSIONS = {
  bun: "1.4.5",
  kafka: "4.1.1",
  keycloak: "26.5.6",
  minio: "v0.0.0-20260212201848-7aac2a2c5b7c",
  etcd: "v3.6.8",
  kubernetes: "v1.36.3",
} as const;
