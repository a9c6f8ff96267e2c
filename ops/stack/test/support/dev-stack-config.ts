import type { StackEnv } from "@svc/testkit";

/**
 * `SVC_STACK_<SECTION>_<KEY>` overrides that make a stack config name the servers the tests run against (the
 * developer's stack, or the run's private one): a stack of the test's own can then start only its optional
 * servers (the KMS and its audit instance) on top of them, in a state directory of its own.
 */
export function configOfRunningStack(stack: StackEnv): Record<string, string> {
  const pg = new URL(stack.postgresUrl);
  const s3 = new URL(stack.s3.endpoint);
  const idp = new URL(stack.idp.url);
  const [, kafkaPort = ""] = (stack.kafkaBrokers[0] ?? "").split(":");
  return {
    SVC_STACK_POSTGRES_PORT: pg.port,
    SVC_STACK_POSTGRES_USER: decodeURIComponent(pg.username),
    SVC_STACK_POSTGRES_PASSWORD: decodeURIComponent(pg.password),
    SVC_STACK_POSTGRES_DATABASE: pg.pathname.slice(1),
    SVC_STACK_KAFKA_PORT: kafkaPort,
    SVC_STACK_MINIO_PORT: s3.port,
    SVC_STACK_MINIO_ROOT_USER: stack.s3.accessKeyId,
    SVC_STACK_MINIO_ROOT_PASSWORD: stack.s3.secretAccessKey,
    SVC_STACK_MINIO_REGION: stack.s3.region,
    SVC_STACK_KEYCLOAK_PORT: idp.port,
  };
}
