import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rejectionOf } from "@svc/testkit";
import { TokenError, writeTokenFile } from "../index.ts";
import { refreshTokenFrom } from "../src/refresh-source.ts";

const dir = mkdtempSync(join(tmpdir(), "refresh-source-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const noStdin = () => Promise.reject(new Error("stdin must not be read"));
const stdin = (text: string) => () => Promise.resolve(text);

test("--from reads the refresh token of a token file; a flag wins over SVC_REFRESH_TOKEN", async () => {
  const path = join(dir, "set.json");
  writeTokenFile(path, { access_token: "a.b.c", refresh_token: "from-file", expires_at: 1 });
  expect(await refreshTokenFrom({ from: path, env: "from-env" }, noStdin)).toBe("from-file");
  expect(await refreshTokenFrom({ stdin: true, env: "from-env" }, stdin(" from-stdin\n"))).toBe("from-stdin");
  expect(await refreshTokenFrom({ env: "from-env" }, noStdin)).toBe("from-env");
});

test.each([
  ["nothing given", {}, "TOKEN_CONFIG_INVALID"],
  ["--from and --stdin together", { from: "x.json", stdin: true }, "TOKEN_CONFIG_INVALID"],
  ["--stdin with empty input", { stdin: true }, "TOKEN_CONFIG_INVALID"],
] as const)("%s is refused", async (_name, sources, code) => {
  const error = await rejectionOf(refreshTokenFrom(sources, stdin("  \n")), TokenError);
  expect(error.code).toBe(code);
});

test("a token file without refresh_token fails with TOKEN_FILE_INVALID; a readable-by-others one is refused", async () => {
  const bare = join(dir, "bare.json");
  writeTokenFile(bare, { access_token: "a.b.c", expires_at: 1 });
  expect((await rejectionOf(refreshTokenFrom({ from: bare }, noStdin), TokenError)).code).toBe("TOKEN_FILE_INVALID");
  const shared = join(dir, "shared.json");
  writeFileSync(shared, JSON.stringify({ access_token: "a.b.c", refresh_token: "r", expires_at: 1 }));
  chmodSync(shared, 0o644);
  expect((await rejectionOf(refreshTokenFrom({ from: shared }, noStdin), TokenError)).code).toBe("TOKEN_FILE_INSECURE");
});
