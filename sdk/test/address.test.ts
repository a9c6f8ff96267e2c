import { expect, test } from "bun:test";
import { isIpLiteral, isLoopbackHost, parseAddress } from "../index.ts";

test("parseAddress accepts host:port, IPv4 and [IPv6] and rejects the rest", () => {
  expect(parseAddress("audit.svc:50052")).toEqual({ host: "audit.svc", port: 50052 });
  expect(parseAddress("[::1]:50050")).toEqual({ host: "::1", port: 50050 });
  expect(parseAddress("127.0.0.1:0")).toBeUndefined();
  expect(parseAddress("[zz]:1")).toBeUndefined();
  expect(parseAddress("http://x:1")).toBeUndefined();
});

test("IP literals and loopback hosts", () => {
  expect(isIpLiteral("10.0.0.1")).toBe(true);
  expect(isIpLiteral("localhost")).toBe(false);
  expect(isLoopbackHost("127.0.0.5")).toBe(true);
  expect(isLoopbackHost("[::1]")).toBe(true);
  expect(isLoopbackHost("idp.example.com")).toBe(false);
});
