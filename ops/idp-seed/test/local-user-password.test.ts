import { expect, test } from "bun:test";
import { LOCAL_USER_PASSWORD_DEFAULT, localUserPassword } from "../index.ts";

test("a given password wins, on any host", () => {
  expect(localUserPassword("given", "http://127.0.0.1:8082")).toBe("given");
  expect(localUserPassword("given", "https://idp.example")).toBe("given");
});

test.each(["http://127.0.0.1:8082", "http://localhost:18082", "http://idp.localhost", "http://[::1]:8082"])(
  "none given, an IdP on the local host (%s) gets the local default",
  (url) => {
    expect(localUserPassword(undefined, url)).toBe(LOCAL_USER_PASSWORD_DEFAULT);
    expect(localUserPassword("", url)).toBe(LOCAL_USER_PASSWORD_DEFAULT);
  },
);

test.each(["https://idp.example", "http://10.0.0.5:8082", "http://127.0.0.1.example"])(
  "none given, another IdP (%s) gets none",
  (url) => {
    expect(localUserPassword(undefined, url)).toBeUndefined();
  },
);
