import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type PrivateStack, preparePrivateStack } from "@svc/testkit";

const cli = join(import.meta.dir, "../../../ops/stack/src/cli.ts");

/**
 * A Kafka broker of the test's own (a private stack with only Kafka selected), so the test may stop and restart it.
 * Started and stopped through the stack CLI with the private stack's state directory and ports.
 */
export interface PrivateKafka {
  brokers: string[];
  /** Stops the broker, keeping its data. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  start(): Promise<void>;
  remove(): Promise<void>;
}

async function run(stack: PrivateStack, args: string[]): Promise<void> {
  const child = Bun.spawn([process.execPath, "run", cli, ...args], {
    env: { ...process.env, ...stack.overrides },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out, err] = await Promise.all([
    child.exited,
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  if (code !== 0) throw new Error(`stack ${args.join(" ")} exited ${code}: ${out}\n${err}`);
}

export async function startPrivateKafka(): Promise<PrivateKafka> {
  const stack = await preparePrivateStack();
  await run(stack, ["up", "kafka"]);
  const envFile = readFileSync(join(stack.ctx.stateDir, "stack.env"), "utf8");
  const brokers = /^SVC_STACK_KAFKA_BROKERS=(.*)$/m.exec(envFile)?.[1];
  if (!brokers) throw new Error(`no SVC_STACK_KAFKA_BROKERS in ${envFile}`);
  return {
    brokers: brokers.split(","),
    stop: () => run(stack, ["down"]),
    start: () => run(stack, ["up", "kafka"]),
    remove: () => stack.remove(),
  };
}
