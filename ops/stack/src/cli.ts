#!/usr/bin/env bun
import { Command } from "commander";
import { createContext } from "./context-factory.ts";
import { StackError } from "./errors.ts";
import { COMPONENT_SERVICES, servicesUsage } from "./services/components.ts";
import { auditApi, servicesAuditUsage } from "./services/services-audit.ts";
import { down, installAll, readEnvFile, selectServices, status, up } from "./stack.ts";
import { installedTool } from "./tools.ts";

const program = new Command("stack")
  .description(
    "The local stack: Kafka (KRaft), MinIO, Keycloak, PostgreSQL, etcd and kube-apiserver on loopback; the KMS and its audit instance on request",
  )
  .option("--state-dir <dir>", "where the stack keeps data, logs and pid files (env SVC_STACK_STATE_DIR)");

const context = () => createContext(process.env, { stateDir: program.opts<{ stateDir?: string }>().stateDir });

/** The first column's width: the longest server name ("kms-audit-consumer") plus a space, at least 16. */
const nameWidth = (names: string[]) => Math.max(16, ...names.map((name) => name.length + 1));

program
  .command("install [services...]")
  .description("fetch and build the servers (all by default) into the cache, start nothing")
  .action(async (names: string[]) => {
    const ctx = context();
    const took = await installAll(ctx, selectServices(names));
    ctx.progress.stop();
    const width = nameWidth([...took.keys()]);
    for (const [name, s] of took) console.log(`${name.padEnd(width)} ${s}s`);
  });

program
  .command("up [services...]")
  .description("install what is missing, start what is not running (all by default), wait until each is ready")
  .option("--kms", "also start the KMS (TLS gRPC; its CA path in stack.env as SVC_STACK_KMS_CA_CERT)")
  .option("--kms-audit", "also start the KMS with its audit instance (agent and queue-consumer); implies --kms")
  .option(
    "--services",
    "also start two replicas of orchestrator, backend, compute and shaper and two endpoints, wait for one leader each, and the endpoints' audit pipeline (agents, writer, audit API)",
  )
  .action(async (names: string[], options: { kms?: boolean; kmsAudit?: boolean; services?: boolean }) => {
    const ctx = context();
    const selected = selectServices(names, options);
    const result = await up(ctx, selected);
    const width = nameWidth(result.timings.map((t) => t.name));
    console.log(`\n${"service".padEnd(width)} ${"install".padStart(8)} ${"start".padStart(8)}`);
    for (const t of result.timings) {
      const start = t.alreadyRunning ? "running" : `${t.startSeconds}s`;
      console.log(`${t.name.padEnd(width)} ${`${t.installSeconds}s`.padStart(8)} ${start.padStart(8)}`);
    }
    console.log(`\naddresses: ${result.envFile} (set -a; . ${result.envFile}; set +a)`);
    if (selected.some((service) => COMPONENT_SERVICES.includes(service))) {
      const grpcurl = Bun.which("grpcurl") ?? installedTool("grpcurl", ctx.env) ?? "grpcurl";
      console.log(`\n${servicesUsage(ctx, grpcurl).join("\n")}`);
      if (selected.includes(auditApi)) console.log(servicesAuditUsage(ctx, grpcurl).join("\n"));
    }
  });

program
  .command("down")
  .description(
    "stop every server of the stack (the KMS, its audit instance, the component replicas and their audit pipeline too)",
  )
  .option("--purge", "also delete the stack's data and logs")
  .option("--services", "stop only what `up --services` started (the replicas and the endpoints' audit pipeline)")
  .action(async (options: { purge?: boolean; services?: boolean }) => {
    const stopped = await down(context(), options);
    console.log(stopped.length === 0 ? "nothing was running" : `stopped: ${stopped.join(", ")}`);
  });

program
  .command("status")
  .description(
    "each server's address and state (the KMS's and the replicas' once started, with their roles); exits 1 unless all are ready",
  )
  .action(async () => {
    const rows = await status(context());
    const width = nameWidth(rows.map((row) => row.name));
    for (const row of rows) {
      const pid = row.pid === undefined ? "" : ` (pid ${row.pid})`;
      const role = row.role === undefined ? "" : `  ${row.role}`;
      console.log(`${row.name.padEnd(width)} ${row.state.padEnd(20)} ${row.address}${pid}${role}`);
    }
    if (rows.some((r) => r.state !== "ready")) process.exitCode = 1;
  });

program
  .command("env")
  .description("print the running stack's SVC_STACK_* variables")
  .action(() => {
    const env = readEnvFile(context().stateDir);
    if (!env) throw new StackError("STACK_ENV_INCOMPLETE", "the stack is not up (no env file); run `bun run up`");
    for (const [key, value] of Object.entries(env)) console.log(`${key}=${value}`);
  });

try {
  await program.parseAsync();
} catch (error) {
  const code = error instanceof StackError ? ` [${error.code}]` : "";
  console.error(`stack: ${error instanceof Error ? error.message : String(error)}${code}`);
  process.exit(1);
}
