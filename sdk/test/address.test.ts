import { expect, test } from "bun:test";
import { wantsForwardedProto } from "@svc/token";
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
  expect(isLoopbackHost("::1")).toBe(true);
  expect(isLoopbackHost("idp.localhost")).toBe(true);
  expect(isLoopbackHost("idp.example.com")).toBe(false);
  expect(isLoopbackHost("localhost.example.com")).toBe(false);
});

test.each([
  "localhost",
  "LOCALHOST",
  "idp.localhost",
  "a.b.localhost",
  "127.0.0.1",
  "127.255.3.4",
  "[::1]",
  "idp.example.com",
  "localhost.example.com",
  "mylocalhost",
  "128.0.0.1",
  "10.0.0.1",
  "[::2]",
  "[2001:db8::1]",
])("isLoopbackHost(%s) agrees with @svc/token's wantsForwardedProto", (host) => {
  const url = new URL(`http://${host}:8082/realms/svc`);
  expect(isLoopbackHost(url.hostname)).toBe(wantsForwardedProto(url.toString()));
});
