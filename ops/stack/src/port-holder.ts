import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { commandLineOf, processGroupOf } from "./proc-process.ts";

/** A process that holds a listening TCP socket. */
export interface PortHolder {
  pid: number;
  /** Its process group: the pid `up` spawned, for a server of this stack and the children it forks. */
  pgid: number | undefined;
  command: string | undefined;
}

const TCP_LISTEN = "0A";

/**
 * Inodes of the sockets listening on `port` on any address, from /proc/net/tcp and /proc/net/tcp6 (the kernel's
 * tables for this network namespace; a row's local address is `<hex ip>:<hex port>`, its 4th column the state,
 * its 10th the inode). Undefined when neither table can be read (not Linux).
 */
export function listeningInodes(port: number, procRoot = "/proc"): Set<string> | undefined {
  const inodes = new Set<string>();
  let readable = false;
  for (const table of ["tcp", "tcp6"]) {
    let text: string;
    try {
      text = readFileSync(`${procRoot}/net/${table}`, "utf8");
    } catch {
      continue;
    }
    readable = true;
    for (const line of text.split("\n").slice(1)) {
      const columns = line.trim().split(/\s+/);
      const local = columns[1];
      const inode = columns[9];
      if (local === undefined || inode === undefined || columns[3] !== TCP_LISTEN) continue;
      const hexPort = local.slice(local.lastIndexOf(":") + 1);
      if (Number.parseInt(hexPort, 16) === port && inode !== "0") inodes.add(inode);
    }
  }
  return readable ? inodes : undefined;
}

/** The pids whose open files include one of these sockets (every readable /proc/<pid>/fd link `socket:[inode]`). */
function socketOwners(inodes: ReadonlySet<string>, procRoot: string): number[] {
  const owners: number[] = [];
  let pids: string[];
  try {
    pids = readdirSync(procRoot).filter((name) => /^\d+$/.test(name));
  } catch {
    return owners;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`${procRoot}/${pid}/fd`);
    } catch {
      continue; // gone, or another user's process
    }
    for (const fd of fds) {
      let link: string;
      try {
        link = readlinkSync(`${procRoot}/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
      if (inode !== undefined && inodes.has(inode)) {
        owners.push(Number(pid));
        break;
      }
    }
  }
  return owners;
}

/** What /proc says about the listeners of one port. */
export interface PortListeners {
  /** Listening sockets on the port, on any address. */
  sockets: number;
  /** The processes holding them that this user may inspect (a forking server's children may share one). */
  holders: PortHolder[];
}

/** Who listens on `port`; undefined when /proc cannot tell (not Linux). */
export function portListeners(port: number, procRoot = "/proc"): PortListeners | undefined {
  const inodes = listeningInodes(port, procRoot);
  if (inodes === undefined) return undefined;
  const holders = inodes.size === 0 ? [] : socketOwners(inodes, procRoot);
  return {
    sockets: inodes.size,
    holders: holders.map((pid) => ({ pid, pgid: processGroupOf(pid), command: commandLineOf(pid) })),
  };
}

/** "pid 123 (etcd --name=...)" for each holder, or why the holder cannot be named. */
export function describeHolders(listeners: PortListeners | undefined): string {
  if (listeners === undefined) return "a process that cannot be determined here (no /proc/net/tcp)";
  if (listeners.holders.length === 0) {
    const why =
      listeners.sockets === 0
        ? "no listening socket on it in /proc/net/tcp{,6}"
        : "no readable /proc/<pid>/fd holds its socket; `sudo ss -ltnp` may tell";
    return `a process that cannot be determined (${why})`;
  }
  return listeners.holders.map((h) => `pid ${h.pid} (${h.command ?? "command line unreadable"})`).join(", ");
}
