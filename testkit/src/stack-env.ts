import { StackError } from "@svc/stack";

/** Addresses of the stack the tests run against (set by the global setup, or by the caller's environment). */
export interface StackEnv {
  kafkaBrokers: string[];
  s3: { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string; buckets: string[] };
  idp: { url: string; adminUser: string; adminPassword: string };
  postgresUrl: string;
  kubeconfig: string;
}

export const STACK_ENV_KEYS = [
  "SVC_STACK_KAFKA_BROKERS",
  "SVC_STACK_S3_ENDPOINT",
  "SVC_STACK_S3_REGION",
  "SVC_STACK_S3_ACCESS_KEY",
  "SVC_STACK_S3_SECRET_KEY",
  "SVC_STACK_S3_BUCKETS",
  "SVC_STACK_IDP_URL",
  "SVC_STACK_IDP_ADMIN_USER",
  "SVC_STACK_IDP_ADMIN_PASSWORD",
  "SVC_STACK_PG_URL",
  "SVC_STACK_KUBECONFIG",
] as const;

export function missingStackKeys(env: Record<string, string | undefined>): string[] {
  return STACK_ENV_KEYS.filter((key) => !env[key]);
}

export function stackEnv(env: Record<string, string | undefined> = process.env): StackEnv {
  const missing = missingStackKeys(env);
  if (missing.length > 0) {
    throw new StackError("STACK_ENV_INCOMPLETE", `the test stack is not configured: ${missing.join(", ")} unset`);
  }
  const get = (key: (typeof STACK_ENV_KEYS)[number]) => env[key] ?? "";
  return {
    kafkaBrokers: get("SVC_STACK_KAFKA_BROKERS").split(","),
    s3: {
      endpoint: get("SVC_STACK_S3_ENDPOINT"),
      region: get("SVC_STACK_S3_REGION"),
      accessKeyId: get("SVC_STACK_S3_ACCESS_KEY"),
      secretAccessKey: get("SVC_STACK_S3_SECRET_KEY"),
      buckets: get("SVC_STACK_S3_BUCKETS").split(","),
    },
    idp: {
      url: get("SVC_STACK_IDP_URL"),
      adminUser: get("SVC_STACK_IDP_ADMIN_USER"),
      adminPassword: get("SVC_STACK_IDP_ADMIN_PASSWORD"),
    },
    postgresUrl: get("SVC_STACK_PG_URL"),
    kubeconfig: get("SVC_STACK_KUBECONFIG"),
  };
}

/** The stack's MinIO as S3 client settings (`new S3Client(stackS3Settings())`): path-style, its root credentials. */
export function stackS3Settings(s3: StackEnv["s3"] = stackEnv().s3) {
  return {
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  };
}
