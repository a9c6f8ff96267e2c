import { expect, test } from "bun:test";
import { LOCAL_USER_PASSWORD_DEFAULT } from "@svc/idp-seed";
import { thrownBy } from "@svc/testkit";
import { parseTokenConfig, TokenError } from "../index.ts";

test("defaults: local IdP on 8082, realm svc, client svc-cli, the local stack's user password", () => {
  expect(parseTokenConfig({})).toEqual({
    url: "http://127.0.0.1:8082",
    realm: "svc",
    clientId: "svc-cli",
    userPassword: LOCAL_USER_PASSWORD_DEFAULT,
    refreshToken: undefined,
  });
  expect(LOCAL_USER_PASSWORD_DEFAULT).toBe("svc-local-users");
});

test("with only the local stack's variables, the IdP is the stack's and the password its default", () => {
  const config = parseTokenConfig({ SVC_STACK_IDP_URL: "http://127.0.0.1:38082", SVC_STACK_PG_URL: "ignored" });
  expect(config.url).toBe("http://127.0.0.1:38082");
  expect(config.userPassword).toBe(LOCAL_USER_PASSWORD_DEFAULT);
});

test("an IdP not on the local host gets no default password", () => {
  expect(parseTokenConfig({ IDP_URL: "https://idp.example" }).userPassword).toBeUndefined();
  expect(parseTokenConfig({ IDP_URL: "https://idp.example", IDP_LOCAL_USER_PASSWORD: "p" }).userPassword).toBe("p");
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
  [{ SVC_STACK_IDP_URL: "idp.example" }, "SVC_STACK_IDP_URL"],
])("a bad value is refused with TOKEN_CONFIG_INVALID naming the variable (%#)", (env, field) => {
  const error = thrownBy(() => parseTokenConfig(env), TokenError);
  expect(error.code).toBe("TOKEN_CONFIG_INVALID");
  expect(error.message).toStartWith(field);
});
