import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { runCommand } from "@svc/common";
import { tempDir } from "@svc/testkit";

// No container engine here: what ops/images/Dockerfile does is run in a temp copy of the repository made the way
// the build context is (the working tree minus .dockerignore), with the same scripts the Dockerfile runs.
const ROOT = join(import.meta.dir, "..", "..", "..");
const DOCKERFILE = await Bun.file(join(ROOT, "ops/images/Dockerfile")).text();
/** The services of the images, each with a setting given a bad value and the variable its exit must name. */
const BAD_SETTING: Record<string, string> = {
  endpoint: "SVC_HEALTH_PORT",
  orchestrator: "SVC_HEALTH_PORT",
  backend: "SVC_HEALTH_PORT",
  compute: "SVC_HEALTH_PORT",
  shaper: "SVC_GRPC_PORT",
  kms: "SVC_KMS_PORT",
  agent: "SVC_AGENT_LINGER_MS",
  "queue-consumer": "SVC_AUDIT_PG_POOL",
  "audit-api": "SVC_AUDIT_HOST_PORT",
};

const run = (cmd: string[], cwd: string, env: Record<string, string> = {}) =>
  // Only PATH and HOME from this process: the stack's SVC_* settings must not leak into the services.
  runCommand(cmd, { cwd, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env } });

/** The build context: files git would not ignore, minus the .dockerignore patterns. */
async function contextFiles(): Promise<string[]> {
  const listed = await run(["git", "ls-files", "-co", "--exclude-standard", "-z"], ROOT);
  const patterns = (await Bun.file(join(ROOT, ".dockerignore")).text())
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .flatMap((pattern) => [new Bun.Glob(pattern), new Bun.Glob(`${pattern}/**`)]);
  return listed.stdout
    .split("\0")
    .filter((file) => file !== "" && existsSync(join(ROOT, file)))
    .filter((file) => !patterns.some((glob) => glob.match(file)));
}

const copy = await tempDir("image-context");
afterAll(() => copy.remove());
const files = await contextFiles();
for (const file of files) {
  mkdirSync(dirname(join(copy.path, file)), { recursive: true });
  cpSync(join(ROOT, file), join(copy.path, file));
}
const install = await run(["sh", "ops/images/install.sh"], copy.path);

test("the Dockerfile's stages: bun 1.4.5 (this repository's), the build-stage scripts, a non-root runtime", () => {
  expect(DOCKERFILE).toContain(`ARG BUN_VERSION=${Bun.version}`);
  expect(DOCKERFILE).toMatch(/FROM oven\/bun:\$\{BUN_VERSION\} AS install/);
  expect(DOCKERFILE).toMatch(/FROM oven\/bun:\$\{BUN_VERSION\}-slim AS runtime/);
  expect(DOCKERFILE).toContain("RUN sh ops/images/install.sh");
  expect(DOCKERFILE).toMatch(/sh ops\/images\/entry\.sh "\$\{SERVICE\}"/);
  expect(DOCKERFILE).toMatch(/^USER 1000:1000$/m);
  expect(DOCKERFILE).toContain('ENTRYPOINT ["bun", "run", "/app/service.ts"]');
});

test("the context leaves out .git, CI and installed modules, and keeps every workspace's package.json", async () => {
  expect(files.some((f) => f.startsWith(".ci/") || f.startsWith(".git/") || f.includes("node_modules/"))).toBe(false);
  const root = (await Bun.file(join(ROOT, "package.json")).json()) as { workspaces: string[] };
  for (const workspace of root.workspaces) {
    const glob = new Bun.Glob(`${workspace}/package.json`);
    expect(files.filter((f) => glob.match(f)).length).toBeGreaterThan(0);
  }
});

test("the build stage installs from the frozen lockfile, production dependencies only", () => {
  expect(install.stderr + install.stdout).not.toContain("error");
  expect(install.code).toBe(0);
  // root devDependencies (type checker, linter) are not in the image
  expect(existsSync(join(copy.path, "node_modules/typescript"))).toBe(false);
  expect(existsSync(join(copy.path, "node_modules/@biomejs"))).toBe(false);
  expect(existsSync(join(copy.path, "components/endpoint/node_modules/@svc/auth"))).toBe(true);
});

test("every service's main resolves all its imports, the lazy ones too, against the production install", async () => {
  const mains = Object.keys(BAD_SETTING).map((service) =>
    ["agent", "queue-consumer", "audit-api"].includes(service)
      ? `${service}/src/main.ts`
      : `components/${service}/src/main.ts`,
  );
  const out = join(copy.path, ".bundle-check");
  const built = await run(["bun", "build", "--target=bun", "--outdir", out, ...mains], copy.path);
  expect(built.stderr).not.toContain("Could not resolve");
  expect(built.code).toBe(0);
});

describe("entry point per service", () => {
  for (const [service, variable] of Object.entries(BAD_SETTING)) {
    test(`${service}: ops/images/entry.sh makes service.ts; started with a bad ${variable} it exits 2 naming it`, async () => {
      const entry = await run(["sh", "ops/images/entry.sh", service], copy.path);
      expect(entry.code).toBe(0);
      expect(await Bun.file(join(copy.path, "service.ts")).text()).toContain(`/${service}/src/main.ts`);
      const started = await run(["bun", "run", "service.ts"], copy.path, { [variable]: "not-a-number" });
      expect(started.stderr).toContain(variable);
      expect(started.code).toBe(2);
    });
  }

  test("an unknown SERVICE fails the build step naming the services", async () => {
    const entry = await run(["sh", "ops/images/entry.sh", "gateway"], copy.path);
    expect(entry.code).toBe(64);
    expect(entry.stderr).toContain("SERVICE must be one of endpoint orchestrator backend");
  });
});
