import { Admin } from "@platformatic/kafka";
import { stackEnv } from "@svc/testkit";

/** `run` with an admin client of the tests' Kafka (the run's stack), closed after. */
export async function withKafkaAdmin<T>(clientId: string, run: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = new Admin({ clientId, bootstrapBrokers: stackEnv().kafkaBrokers, retries: 1 });
  try {
    return await run(admin);
  } finally {
    await admin.close().catch(() => {});
  }
}
