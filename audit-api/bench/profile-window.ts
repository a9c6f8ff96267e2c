/**
 * `bun audit-api/bench/profile-window.ts <profile.cpuprofile> <bench stderr log> [top]`: the CPU samples of each
 * measured section of an api-bench run (`bun --cpu-prof … api-bench.ts … 2> log`), without the data setup and the
 * realm seeding that dominate a whole-process profile. The bench logs `section "<name>" at <epoch µs>` (and `""` at
 * the section's end); a profile's `startTime` and sample times are epoch µs too.
 *
 * Per section: the samples (each one sampling interval of the JavaScript thread running), self samples by where the
 * code lives (a package of node_modules, a workspace folder, Bun's internals, native code), and the top functions by
 * self samples. Idle time is not sampled, so the shares are of the thread's busy time.
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const [profilePath, logPath, topArg] = process.argv.slice(2);
if (!profilePath || !logPath) {
  console.error("usage: profile-window.ts <profile.cpuprofile> <bench stderr log> [top]");
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(profilePath, "utf8")) as CpuProfile;
const windows: { name: string; from: number; to: number }[] = [];
let open: { name: string; from: number } | undefined;
for (const match of readFileSync(logPath, "utf8").matchAll(/section ("[^"]*") at (\d+)/g)) {
  const name = JSON.parse(match[1] as string) as string;
  const at = Number(match[2]);
  if (open) windows.push({ ...open, to: at });
  open = name === "" ? undefined : { name, from: at };
}

/** Where a frame's code lives: a package, a workspace folder, Bun's internals or native code. */
function placeOf(url: string): string {
  if (url === "" || url === "[native code]") return "native";
  const pkg = /node_modules\/(?:\.bun\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1] as string;
  if (/^(internal|node|bun):/.test(url)) return "bun internals";
  const local = /\/work\/[^/]+\/(.+?)\/[^/]+$/.exec(url);
  return local ? (local[1] as string) : url;
}

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
/** The place of the nearest caller that is code of a package or the workspace (native and Bun frames folded in). */
function callerOf(id: number): ProfileNode | undefined {
  for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
    const node = byId.get(at);
    const place = placeOf(node?.callFrame.url ?? "");
    if (place !== "native" && place !== "bun internals") return node;
  }
  return undefined;
}
const frameName = (node: ProfileNode) => {
  const { functionName, url, lineNumber } = node.callFrame;
  const place = placeOf(url);
  return `${functionName || "(anonymous)"}  ${place}${url.includes("/") ? `:${lineNumber + 1}` : ""}`;
};
function ownerOf(id: number): string {
  const caller = callerOf(id);
  return caller ? placeOf(caller.callFrame.url) : "native (no JS caller)";
}
let time = profile.startTime;
const times = profile.timeDeltas.map((delta) => {
  time += delta;
  return time;
});
for (const window of windows) {
  const places = new Map<string, number>();
  const owners = new Map<string, number>();
  const functions = new Map<string, number>();
  let samples = 0;
  profile.samples.forEach((id, i) => {
    const at = times[i] as number;
    if (at < window.from || at >= window.to) return;
    const frame = byId.get(id)?.callFrame;
    if (!frame) return;
    samples++;
    const place = placeOf(frame.url);
    places.set(place, (places.get(place) ?? 0) + 1);
    const owner = ownerOf(id);
    owners.set(owner, (owners.get(owner) ?? 0) + 1);
    const node = byId.get(id) as ProfileNode;
    const caller = place === "native" || place === "bun internals" ? callerOf(id) : undefined;
    const name = `${frameName(node)}${caller ? `  ← ${frameName(caller)}` : ""}`;
    functions.set(name, (functions.get(name) ?? 0) + 1);
  });
  const seconds = (window.to - window.from) / 1e6;
  const share = (n: number) => `${((100 * n) / Math.max(1, samples)).toFixed(1).padStart(5)}%`;
  console.log(`\n## ${window.name}: ${seconds.toFixed(1)} s, ${samples} samples`);
  console.log("\nself samples by place:");
  for (const [place, n] of [...places].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`  ${share(n)}  ${String(n).padStart(6)}  ${place}`);
  }
  console.log("\nself samples by the nearest package or workspace caller (native and Bun frames folded in):");
  for (const [owner, n] of [...owners].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`  ${share(n)}  ${String(n).padStart(6)}  ${owner}`);
  }
  console.log("\ntop functions (self):");
  for (const [name, n] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`  ${share(n)}  ${String(n).padStart(6)}  ${name}`);
  }
}
