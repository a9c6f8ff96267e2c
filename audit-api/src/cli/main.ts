#!/usr/bin/env bun
import { SvcError } from "@svc/common";
import { Command, InvalidArgumentError, Option } from "commander";
import { normaliseRfc3339 } from "../rfc3339.ts";
import { AuditApiClient, type QueryFields } from "./api-client.ts";
import { exportEvents } from "./export-command.ts";
import { forward } from "./forward.ts";
import { awsStyleHelp } from "./help.ts";
import { listEvents } from "./list-command.ts";
import { HecSink } from "./siem-http.ts";
import type { SiemSink } from "./siem-sink.ts";
import { SyslogTcpSink } from "./siem-syslog.ts";
import { TokenSource } from "./token-source.ts";

const log = (line: string) => process.stderr.write(`svc-audit: ${line}\n`);

function timestamp(value: string): string {
  try {
    return normaliseRfc3339("time", value);
  } catch {
    throw new InvalidArgumentError("not an RFC 3339 timestamp (2026-11-23T09:00:00Z or 2026-11-23T18:00:00+09:00)");
  }
}

const positive = (max: number) => (value: string) => {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > max) throw new InvalidArgumentError(`an integer in 1..${max}`);
  return n;
};

function hostPort(value: string): { host: string; port: number } {
  const match = /^(.+):(\d{1,5})$/.exec(value);
  const port = Number(match?.[2]);
  if (!match || port < 1 || port > 65_535) throw new InvalidArgumentError("HOST:PORT, e.g. siem.example:6514");
  return { host: (match[1] as string).replace(/^\[(.*)\]$/, "$1"), port };
}

function httpUrl(value: string): string {
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw new InvalidArgumentError("an http:// or https:// URL");
  }
  return value;
}

interface Common {
  endpointUrl: string;
  tokenFile: string;
  tenantId?: string;
  startTime: string;
  endTime?: string;
  principalId?: string;
  action?: string;
  result?: string;
  resourcePrefix?: string;
}

/** The options every command takes: where the API is, whose token, and the range and lookup filters. */
function withCommon(command: Command, endRequired: boolean): Command {
  const end = new Option(
    "--end-time <timestamp>",
    "Only events before this time (exclusive), RFC 3339; an offset such as +09:00 is converted to UTC." +
      (endRequired ? "" : " Without it, forward follows new events and does not stop."),
  ).argParser(timestamp);
  return command
    .addOption(
      new Option("--start-time <timestamp>", "Only events at or after this time (inclusive), RFC 3339.")
        .argParser(timestamp)
        .makeOptionMandatory(),
    )
    .addOption(endRequired ? end.makeOptionMandatory() : end)
    .option("--principal-id <id>", "Only events of this principal (the question: what did this principal do).")
    .option("--action <action>", "Only events of this action, e.g. /kms.Keys/Rotate.")
    .option("--result <result>", "Only events with this result, e.g. PERMISSION_DENIED.")
    .option("--resource-prefix <prefix>", "Only events whose resource starts with this prefix.")
    .addOption(
      new Option("--endpoint-url <url>", "The audit API's REST base URL.")
        .env("SVC_AUDIT_URL")
        .default("http://127.0.0.1:8052")
        .argParser(httpUrl),
    )
    .addOption(
      new Option(
        "--token-file <path>",
        "The token file `bun run token issue --out` writes (mode 0600). Its access token is sent as the bearer, " +
          "refreshed with its refresh token shortly before it expires (the file is rewritten), and its tenant_id " +
          "claim is the x-tenant-id.",
      )
        .env("SVC_AUDIT_TOKEN_FILE")
        .makeOptionMandatory(),
    )
    .option("--tenant-id <id>", "The x-tenant-id to send instead of the token's tenant_id (it must still match).");
}

function setup(options: Common) {
  const token = new TokenSource(options.tokenFile, options.tenantId);
  const query: QueryFields = {
    start_time: options.startTime,
    end_time: options.endTime ?? "",
    ...(options.principalId !== undefined && { principal_id: options.principalId }),
    ...(options.action !== undefined && { action: options.action }),
    ...(options.result !== undefined && { result: options.result }),
    ...(options.resourcePrefix !== undefined && { resource_prefix: options.resourcePrefix }),
  };
  return { api: new AuditApiClient(options.endpointUrl, token), query };
}

const program = new Command("svc-audit")
  .description("Query, export and forward the audit trail of the svc operations plane.")
  .configureHelp({
    formatHelp: awsStyleHelp({
      name: "svc-audit",
      description:
        "Query, export and forward the audit trail: the records the audit pipeline stored for your tenant. Every " +
        "command reads a token file written by `bun run token issue --out` and sends its tenant.",
      examples:
        "   bun run token issue --user security --scope 'audit:read audit:export offline_access' --out ~/.svc/security.json\n" +
        "   export SVC_AUDIT_TOKEN_FILE=~/.svc/security.json\n" +
        "   bun run svc-audit list --start-time 2026-11-23T00:00:00Z --end-time 2026-11-24T00:00:00Z --max-items 20",
      output: "See the help of each command: svc-audit <command> --help.",
    }),
  });

const list = withCommon(
  program.command("list").description("Looks up audit events of a time range, oldest first; JSON on stdout."),
  true,
)
  .addOption(
    new Option("--max-items <n>", "The most events to return; next_token then continues.").argParser(
      positive(1_000_000),
    ),
  )
  .addOption(new Option("--page-size <n>", "Events per API call.").argParser(positive(10_000)).default(100))
  .option("--starting-token <token>", "The next_token of an earlier list with the same range and filters.")
  .action(async (options: Common & { maxItems?: number; pageSize: number; startingToken?: string }) => {
    const { api, query } = setup(options);
    const answer = await listEvents({
      api,
      query,
      pageSize: options.pageSize,
      maxItems: options.maxItems,
      startingToken: options.startingToken ?? "",
    });
    process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
  });
list.configureHelp({
  formatHelp: awsStyleHelp({
    name: "list",
    description:
      "Looks up audit events of your tenant that occurred in a time range, [--start-time, --end-time), optionally " +
      "narrowed by principal, action, result and resource prefix (the lookup attributes). Events come in a stable " +
      "order, time then id; the total_count is exact for the range and filters, each event counted once. Needs " +
      "the audit:read scope.\n" +
      "By default every page is fetched; --max-items stops earlier and prints a next_token for --starting-token.",
    examples:
      "To list what one principal did in an hour:\n" +
      "   svc-audit list --start-time 2026-11-23T09:00:00Z --end-time 2026-11-23T10:00:00Z --principal-id svc-app\n" +
      "To find every refused call of a day, 50 at a time:\n" +
      "   svc-audit list --start-time 2026-11-23T00:00:00+09:00 --end-time 2026-11-24T00:00:00+09:00 \\\n" +
      "       --result PERMISSION_DENIED --max-items 50",
    output:
      "total_count -> (integer)\n   The number of events in the range that match the filters.\n" +
      "events -> (list)\n   The stored records (id, time, source, action, resource, result, duration_ms, " +
      "claimed_tenant_id, principal_id, tenant_id), oldest first.\n" +
      "next_token -> (string)\n   Present when --max-items stopped before the end: pass it to --starting-token.",
  }),
});

const exportCommand = withCommon(
  program.command("export").description("Streams every audit event of a time range as JSONL to a file or stdout."),
  true,
)
  .option("--out <file>", "Write the JSONL to this file (as <file>.partial until complete); - or absent: stdout.")
  .option("--no-progress", "Do not draw the progress bar on stderr.")
  .action(async (options: Common & { out?: string; progress: boolean }) => {
    const { api, query } = setup(options);
    await exportEvents({ api, query, out: options.out, progress: options.progress, log });
  });
exportCommand.configureHelp({
  formatHelp: awsStyleHelp({
    name: "export",
    description:
      "Exports your tenant's audit events of [--start-time, --end-time) as JSONL, each line exactly as it was " +
      "stored, oldest first, through the streaming export (any size). A progress bar on stderr counts events " +
      "against the range's total. Needs the audit:export and audit:read scopes.",
    examples:
      "   svc-audit export --start-time 2026-11-01T00:00:00Z --end-time 2026-12-01T00:00:00Z --out november.jsonl\n" +
      "   svc-audit export --start-time 2026-11-23T00:00:00Z --end-time 2026-11-24T00:00:00Z --no-progress | jq .action",
    output: "JSONL, one stored audit record per line. On stderr: the progress bar and a summary line.",
  }),
});

const forwardCommand = withCommon(
  program
    .command("forward")
    .description("Forwards audit events into a SIEM (HEC-style JSONL over HTTP or RFC 5424 syslog over TCP)."),
  false,
)
  .requiredOption("--checkpoint <file>", "Where the position is kept; an existing one is resumed.")
  .addOption(new Option("--to <kind>", "The SIEM protocol.").choices(["http", "syslog"]).makeOptionMandatory())
  .addOption(
    new Option(
      "--http-url <url>",
      "http: the collector URL, e.g. https://splunk:8088/services/collector/event.",
    ).argParser(httpUrl),
  )
  .option("--sourcetype <name>", "http: the sourcetype of each event.", "svc:audit")
  .addOption(new Option("--syslog-address <host:port>", "syslog: the receiver's TCP address.").argParser(hostPort))
  .addOption(
    new Option("--batch-size <n>", "Events per delivery (one API page).").argParser(positive(10_000)).default(500),
  )
  .addOption(
    new Option("--settle-seconds <n>", "Following: send events only once they are this old.")
      .argParser(positive(86_400))
      .default(60),
  )
  .addOption(
    new Option("--poll-seconds <n>", "Following: how often to look for new events.")
      .argParser(positive(3_600))
      .default(5),
  )
  .addOption(
    new Option("--max-backoff-seconds <n>", "Longest wait between two retries of a failed call or delivery.")
      .argParser(positive(3_600))
      .default(30),
  )
  .action(
    async (
      options: Common & {
        checkpoint: string;
        to: "http" | "syslog";
        httpUrl?: string;
        sourcetype: string;
        syslogAddress?: { host: string; port: number };
        batchSize: number;
        settleSeconds: number;
        pollSeconds: number;
        maxBackoffSeconds: number;
      },
    ) => {
      let sink: SiemSink;
      if (options.to === "http") {
        if (!options.httpUrl) program.error("error: --to http needs --http-url");
        // The token is read from the environment only: an argument is visible to every local user (ps, /proc).
        const hecToken = process.env.SVC_AUDIT_SIEM_TOKEN;
        if (!hecToken) program.error("error: --to http needs the collector token in SVC_AUDIT_SIEM_TOKEN");
        sink = new HecSink(options.httpUrl as string, hecToken as string, options.sourcetype);
      } else {
        if (!options.syslogAddress) program.error("error: --to syslog needs --syslog-address");
        sink = new SyslogTcpSink(options.syslogAddress as { host: string; port: number });
      }
      const { api, query } = setup(options);
      const stop = new AbortController();
      for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => stop.abort());
      const done = await forward({
        api,
        sink,
        checkpointPath: options.checkpoint,
        startTime: query.start_time,
        until: options.endTime,
        filters: (({ start_time: _s, end_time: _e, ...filters }) => filters)(query),
        batchSize: options.batchSize,
        settleMs: options.settleSeconds * 1000,
        pollMs: options.pollSeconds * 1000,
        maxBackoffMs: options.maxBackoffSeconds * 1000,
        log,
        signal: stop.signal,
      });
      log(
        `${stop.signal.aborted ? "stopped" : "done"}: ${done.forwarded} events forwarded, checkpoint ${options.checkpoint}`,
      );
    },
  );
forwardCommand.configureHelp({
  formatHelp: awsStyleHelp({
    name: "forward",
    description:
      "Forwards your tenant's audit events into a SIEM, oldest first, and keeps its position in a checkpoint " +
      "file, so that after a crash, a kill or an outage of the SIEM it resumes where it stopped: no event is lost, " +
      "and none that the SIEM acknowledged is sent again. The checkpoint advances only after the SIEM acknowledged " +
      "a batch: for http a 2xx answer, for syslog the receiver closing the connection after reading the batch to " +
      "its end. Failed calls and deliveries are retried with backoff, for ever; a SIEM answering 4xx (other than " +
      "408 and 429) stops the command with exit status 1.\n" +
      "With --end-time it stops at that time; without, it follows: each round sends the events up to " +
      "--settle-seconds ago. An event stored later than that after its own time is not sent while following. " +
      "Only a kill in the instant between the SIEM's acknowledgement and the checkpoint's write repeats one batch; " +
      "each event carries its id (HEC: event.id; syslog: the id parameter of [audit@32473]) so the SIEM can drop " +
      "it. --start-time is where a new checkpoint starts; the range, filters and target must match an existing " +
      "checkpoint. Needs the audit:read scope.\n" +
      "http: one POST per batch to --http-url, one line per event {time, host, source, sourcetype, event}, header " +
      "Authorization: Splunk <SVC_AUDIT_SIEM_TOKEN>. syslog: RFC 5424 messages (facility 13, log audit; severity " +
      "info for OK, notice otherwise; the record as JSON in MSG) in RFC 6587 octet-counting frames over TCP, one " +
      "connection per batch.",
    examples:
      "   SVC_AUDIT_SIEM_TOKEN=$(cat hec.token) svc-audit forward --start-time 2026-11-23T00:00:00Z \\\n" +
      "       --to http --http-url https://splunk.example:8088/services/collector/event --checkpoint splunk.ckpt\n" +
      "   svc-audit forward --start-time 2026-11-01T00:00:00Z --end-time 2026-11-23T00:00:00Z \\\n" +
      "       --to syslog --syslog-address siem.example:601 --checkpoint backfill.ckpt",
    output:
      "Nothing on stdout. On stderr one line per delivered batch, each retry with its reason, and a summary at the " +
      "end. Exit status 0 at --end-time or on SIGTERM/SIGINT (after the current batch), 1 on a failure that " +
      "retrying cannot mend.",
  }),
});

try {
  await program.parseAsync();
} catch (error) {
  const code = error instanceof SvcError ? ` [${error.code}]` : "";
  log(`${error instanceof Error ? error.message : String(error)}${code}`);
  process.exit(1);
}
