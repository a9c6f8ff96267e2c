import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { SQL } from "bun";
import type { StackConfig } from "../config.ts";
import type { StackContext, StackService } from "../context.ts";
import { StackError } from "../errors.ts";
import { aptInstall } from "../installers.ts";
import { runTool } from "../run-tool.ts";
import { startServer } from "../start-server.ts";

const PG_ROOT = "/usr/lib/postgresql";

function pgBinDir(): string | undefined {
  if (!existsSync(PG_ROOT)) return undefined;
  const majors = readdirSync(PG_ROOT)
    .filter((v) => existsSync(join(PG_ROOT, v, "bin", "postgres")))
    .sort((a, b) => Number(b) - Number(a));
  return majors[0] === undefined ? undefined : join(PG_ROOT, majors[0], "bin");
}

const isRoot = () => process.getuid?.() === 0;

/**
 * PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user, and its data directory
 * lives where that user can reach it (root's home is not traversable), keyed by the stack's state directory.
 */
function dataDir(ctx: StackContext): string {
  if (!isRoot()) return join(ctx.stateDir, "postgres", "data");
  const key = new Bun.CryptoHasher("sha256").update(ctx.stateDir).digest("hex").slice(0, 12);
  return join("/var/tmp/svc-ops-postgres", key);
}

/** Runs a PostgreSQL binary, as the postgres user when this process is root. */
function asPgUser(command: string, args: string[]): [string, string[]] {
  if (!isRoot()) return [command, args];
  return ["setpriv", ["--reuid=postgres", "--regid=postgres", "--init-groups", command, ...args]];
}

function client(ctx: StackContext, database: string): SQL {
  const { port, user, password } = ctx.config.postgres;
  return new SQL({ hostname: "127.0.0.1", port, username: user, password, database, max: 1, connectionTimeout: 2 });
}

async function query(ctx: StackContext, database: string, text: string): Promise<unknown[]> {
  const sql = client(ctx, database);
  try {
    return await sql.unsafe(text);
  } finally {
    await sql.close();
  }
}

/** The server's command line: its data directory, address and the settings of `ops/stack.toml`'s `[postgres]`. */
export function postgresServerArgs(config: StackConfig["postgres"], data: string): string[] {
  const settings = {
    listen_addresses: "127.0.0.1",
    unix_socket_directories: data,
    shared_buffers: `${config.shared_buffers_mb}MB`,
    max_wal_size: `${config.max_wal_size_mb}MB`,
  };
  return ["-D", data, "-p", String(config.port), ...Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`])];
}

export const postgres: StackService = {
  name: "postgres",
  after: [],
  readiness: { timeoutMs: 60_000 },
  ports: (ctx) => [ctx.config.postgres.port],

  async install(ctx, task) {
    if (!pgBinDir()) await aptInstall(ctx.env, task, ["postgresql"]);
    task.done(`PostgreSQL from Debian's packages at ${pgBinDir()}`);
  },

  async start(ctx, task) {
    const bin = pgBinDir();
    if (!bin) throw new StackError("STACK_TOOL_MISSING", "PostgreSQL is not installed", "postgres");
    const { user, password, database } = ctx.config.postgres;
    const data = dataDir(ctx);
    if (!existsSync(join(data, "PG_VERSION"))) {
      task.update(1, "initdb");
      mkdirSync(dirname(data), { recursive: true, mode: 0o755 });
      mkdirSync(data, { mode: 0o700 });
      const pwfile = `${data}.pw`;
      writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
      if (isRoot()) {
        await runTool("postgres", "chown", ["postgres:postgres", data, pwfile], { env: ctx.env });
      }
      const [cmd, args] = asPgUser(join(bin, "initdb"), [
        "-D",
        data,
        "-U",
        user,
        `--pwfile=${pwfile}`,
        "--auth=scram-sha-256",
        "-E",
        "UTF8",
        "--locale=C",
      ]);
      try {
        await runTool("postgres", cmd, args, { env: ctx.env });
      } finally {
        // initdb has stored the password's hash; the plaintext file is not needed again.
        rmSync(pwfile, { force: true });
      }
    }
    task.update(2, "starting");
    const [cmd, args] = asPgUser(join(bin, "postgres"), postgresServerArgs(ctx.config.postgres, data));
    const daemon = await startServer(ctx, this, { command: cmd, args });
    const rows = await query(ctx, "postgres", `select 1 from pg_database where datname = '${database}'`);
    if (rows.length === 0) await query(ctx, "postgres", `create database "${database}"`);
    task.done(this.address(ctx));
    return daemon;
  },

  async probe(ctx) {
    try {
      await query(ctx, "postgres", "select 1");
      return true;
    } catch {
      return false;
    }
  },

  externalData: (ctx) => (isRoot() ? [dataDir(ctx)] : []),

  address: (ctx) => `postgres://127.0.0.1:${ctx.config.postgres.port}/${ctx.config.postgres.database}`,

  exports(ctx) {
    const { port, user, password, database } = ctx.config.postgres;
    return {
      SVC_STACK_PG_URL: `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`,
    };
  },
};
