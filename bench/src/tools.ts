import { existsSync } from "node:fs";
import { ensureDebianPackages } from "@svc/stack";
import { BenchError } from "./errors.ts";

/** The peers the bench measures ours against: kcat (the limit) and rsyslog's imfile → omkafka (the usual shipper). */
export interface PeerTools {
  kcat: string;
  rsyslogd: string;
  /** Directory of rsyslog's loadable modules (holds omkafka.so and imfile.so). */
  rsyslogModules: string;
}

const PACKAGES = ["kcat", "rsyslog", "rsyslog-kafka"] as const;
const MODULE_DIRS = ["/usr/lib/x86_64-linux-gnu/rsyslog", "/usr/lib/aarch64-linux-gnu/rsyslog", "/usr/lib/rsyslog"];

function which(command: string): string | undefined {
  return Bun.which(command, { PATH: `${process.env.PATH ?? ""}:/usr/sbin:/sbin` }) ?? undefined;
}

function findPeers(): Partial<PeerTools> {
  const modules = MODULE_DIRS.find((dir) => existsSync(`${dir}/omkafka.so`) && existsSync(`${dir}/imfile.so`));
  return { kcat: which("kcat"), rsyslogd: which("rsyslogd"), rsyslogModules: modules };
}

function missingOf(found: Partial<PeerTools>): string[] {
  const missing: string[] = [];
  if (!found.kcat) missing.push("kcat");
  if (!found.rsyslogd) missing.push("rsyslog");
  if (!found.rsyslogModules) missing.push("rsyslog-kafka");
  return missing;
}

export interface EnsurePeersOptions {
  /** Install missing packages with apt-get (root only). Default true. */
  install?: boolean;
  log?: (line: string) => void;
}

/**
 * Finds kcat, rsyslogd and rsyslog's omkafka/imfile modules; installs the Debian packages that are missing
 * (`apt-get install -y kcat rsyslog rsyslog-kafka`) when allowed and running as root. Only the bench needs them;
 * CI and `ops/dev test` never call this. The system rsyslog is never started: the bench runs its own rsyslogd.
 */
export async function ensurePeers(options: EnsurePeersOptions = {}): Promise<PeerTools> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  let found = findPeers();
  let missing = missingOf(found);
  if (missing.length === 0) return found as PeerTools;

  const manual = `apt-get install -y ${PACKAGES.join(" ")}`;
  if (options.install === false) {
    throw new BenchError("BENCH_PEER_MISSING", `missing ${missing.join(", ")}; install them with: ${manual}`, {
      subject: missing.join(","),
    });
  }
  if (process.getuid?.() !== 0 || !which("apt-get")) {
    throw new BenchError(
      "BENCH_PEER_MISSING",
      `missing ${missing.join(", ")} and cannot install them here (needs root and apt-get); run as root: ${manual}`,
      { subject: missing.join(",") },
    );
  }
  log(`bench: installing the peer tools (${missing.join(", ")}): ${manual}`);
  try {
    await ensureDebianPackages([...PACKAGES]);
  } catch (cause) {
    throw new BenchError("BENCH_PEER_INSTALL_FAILED", `${manual} failed: ${(cause as Error).message}`, {
      subject: PACKAGES.join(","),
      cause,
    });
  }
  found = findPeers();
  missing = missingOf(found);
  if (missing.length > 0) {
    throw new BenchError("BENCH_PEER_MISSING", `still missing after install: ${missing.join(", ")}`, {
      subject: missing.join(","),
    });
  }
  return found as PeerTools;
}

if (import.meta.main) {
  const tools = await ensurePeers();
  process.stdout.write(`${JSON.stringify(tools, null, 2)}\n`);
}
