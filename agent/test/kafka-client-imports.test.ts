import { expect, test } from "bun:test";
import { packageImports } from "@svc/testkit";

// @platformatic/kafka's root module loads every client, each compiling its option validators (ajv) as it loads:
// ~0.2 s and ~12 MiB the agent never uses. The agent imports the producer's half through the subpaths our patch of
// the package's exports adds (README.md, "Kafka client").
test("the agent loads the Kafka producer and none of the admin client, the consumer or the schema registries", async () => {
  const kafka = await packageImports(new URL("../src/agent.ts", import.meta.url).pathname, "@platformatic/kafka");
  expect(kafka).toContain("dist/clients/producer/producer.js");
  expect(
    kafka.filter((path) => /^dist\/(index\.js|clients\/(admin|consumer)\/|registries\/confluent)/.test(path)),
  ).toEqual([]);
});

// The same patch compiles each option validator on its first call (README.md, "Kafka client"): a non-strict client
// never calls them, and compiling the producer's six at import was ~0.1 s of the agent's start. Its own process, so
// that ajv's compile is counted from before the producer's modules load.
test("loading and using a non-strict producer compiles no validator; a strict one still refuses a bad option", async () => {
  const script = `
    const { Ajv2020 } = await import("ajv/dist/2020.js");
    const core = Object.getPrototypeOf(Ajv2020.prototype);
    const compile = core.compile;
    let compiled = 0;
    core.compile = function (...args) { compiled += 1; return compile.apply(this, args); };
    const { Producer } = await import("@platformatic/kafka/clients/producer");
    const loose = new Producer({ clientId: "t", bootstrapBrokers: ["127.0.0.1:1"], acks: "bad" });
    await loose.close();
    const before = compiled;
    let refused = "";
    try {
      new Producer({ clientId: "t", bootstrapBrokers: ["127.0.0.1:1"], strict: true, acks: "bad" });
    } catch (error) {
      refused = error.message;
    }
    console.log(JSON.stringify({ before, after: compiled, refused }));`;
  const kafkaDir = Bun.resolveSync("@platformatic/kafka/clients/producer", import.meta.dir);
  const run = Bun.spawnSync([process.execPath, "-e", script], {
    cwd: kafkaDir.replace(/\/dist\/.*$/, ""),
    stderr: "pipe",
  });
  expect(run.stderr.toString()).toBe("");
  const result = JSON.parse(run.stdout.toString()) as { before: number; after: number; refused: string };
  expect(result.before).toBe(0);
  expect(result.after).toBeGreaterThan(0);
  expect(result.refused).toContain("acks");
});

// The patch also loads ajv itself on the first validator compiled (README.md, "Kafka client"): the agent's start
// needed none of it (~50 ms and ~3 MiB). Its own process: whether ajv's modules were loaded is read from the
// CommonJS module cache, after the agent's imports and again after a strict producer compiled its validators.
test("the agent's imports load no ajv; a strict producer's first validation loads it and still names the bad option", () => {
  const agent = new URL("../src/agent.ts", import.meta.url).pathname;
  const script = `
    const ajvModules = () => Object.keys(require.cache).filter((path) => path.includes("/node_modules/ajv/")).length;
    await import(${JSON.stringify(agent)});
    const atStart = ajvModules();
    const { Producer } = await import("@platformatic/kafka/clients/producer");
    let refused = "";
    try {
      new Producer({ clientId: "t", bootstrapBrokers: ["127.0.0.1:1"], strict: true, acks: "bad" });
    } catch (error) {
      refused = error.message;
    }
    console.log(JSON.stringify({ atStart, afterStrict: ajvModules(), refused }));`;
  const run = Bun.spawnSync([process.execPath, "-e", script], { cwd: import.meta.dir, stderr: "pipe" });
  expect(run.stderr.toString()).toBe("");
  const result = JSON.parse(run.stdout.toString()) as { atStart: number; afterStrict: number; refused: string };
  expect(result.atStart).toBe(0);
  expect(result.afterStrict).toBeGreaterThan(0);
  expect(result.refused).toContain("/options/acks should be one of");
});
