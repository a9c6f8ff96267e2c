import { expect, test } from "bun:test";
import { LISTEN_HOST_PATTERN } from "../index.ts";

const pattern = new RegExp(LISTEN_HOST_PATTERN);

test("a listen host: IPv4, names and bare IPv6 pass; URLs, ports, brackets, spaces and empty are refused", () => {
  for (const host of ["0.0.0.0", "127.0.0.1", "localhost", "metrics.svc.cluster.local", "::", "::1", "fe80::1%eth0"]) {
    expect({ host, ok: pattern.test(host) }).toEqual({ host, ok: true });
  }
  for (const host of ["", "http://127.0.0.1", "0.0.0.0:9464", "localhost:9464", "[::1]", "a b", "-leading", "x/y"]) {
    expect({ host, ok: pattern.test(host) }).toEqual({ host, ok: false });
  }
});
