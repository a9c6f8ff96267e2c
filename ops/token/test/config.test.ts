import { expect, test } from "bun:test";
import { thrownBy } from "@svc/testkit";
import { parseTokenConfig, TokenError } from "../index.ts";

test("defaults: local IdP on 8082, realm svc, client svc-cli, no password", () => {
  expect(parseTokenConfig({})).toEqual({
    url: "http://127.0.0.1:8082",
    realm: "svc",
    clientId: "svc-cli",
    userPassword: undefined,
    refreshToken: undefined,
  });
});

test("the environment sets URL (or port), realm, client and password", () => {
  expect(parseTokenConfig({ IDP_PORT: "18082" }).url).toBe("http://127.0.0.1:18082");
  expect(
    parseTokenConfig({
      IDP_URL: "https://idp.example/",
      IDP_REALM: "r",
      IDP_CLIENT_ID: "c",
      IDP_LOCAL_USER_PASSWORD: "p",
      SVC_REFRESH_TOKEN: "rt",
    }),
  ).toEqual({ url: "https://idp.example", realm: "r", clientId: "c", userPassword: "p", refreshToken: "rt" });
});

test.each([
  [{ IDP_URL: "idp.example" }, "IDP_URL"],
  [{ IDP_PORT: "x" }, "IDP_PORT"],
  [{ IDP_PORT: "99999" }, "IDP_PORT"],
  [{ IDP_REALM: "a b" }, "IDP_REALM"],
])("a bad value is refused with TOKEN_CONFIG_INVALID naming the variable (%#)", (env, field) => {
  const error = thrownBy(() => parseTokenConfig(env), TokenError);
  expect(error.code).toBe("TOKEN_CONFIG_INVALID");
  expect(error.message).toStartWith(field);
});
