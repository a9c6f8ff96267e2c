import { expect, test } from "bun:test";
import { wantsForwardedProto } from "../index.ts";

test.each([
  "http://127.0.0.1:8082",
  "http://127.1.2.3:8082/",
  "http://localhost:8082",
  "http://idp.localhost",
  "http://[::1]:8082",
])("plain http to the local host %s gets X-Forwarded-Proto", (url) => {
  expect(wantsForwardedProto(url)).toBe(true);
});

test.each([
  "https://127.0.0.1:8443",
  "https://idp.example",
  "http://idp.example:8082",
  "http://10.0.0.5:8082",
  "http://127.0.0.1.example",
])("https, or plain http to another host (%s), does not", (url) => {
  expect(wantsForwardedProto(url)).toBe(false);
});
