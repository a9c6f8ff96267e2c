import { expect, test } from "bun:test";
import { thrownBy } from "@svc/testkit";
import { IdpSeedError, parseIdpEndpoint } from "../index.ts";

test("defaults: 127.0.0.1:8082, realm svc, client svc-cli; other and empty variables are ignored", () => {
  expect(parseIdpEndpoint({ HOME: "/ignored", IDP_REALM: "" })).toEqual({
    url: "http://127.0.0.1:8082",
    realm: "svc",
    clientId: "svc-cli",
  });
});

test("IDP_PORT sets the port of the default URL; IDP_URL wins and loses its trailing slash", () => {
  expect(parseIdpEndpoint({ IDP_PORT: "18082" }).url).toBe("http://127.0.0.1:18082");
  expect(
    parseIdpEndpoint({ IDP_PORT: "18082", IDP_URL: "https://idp.example/", IDP_REALM: "r", IDP_CLIENT_ID: "c" }),
  ).toEqual({ url: "https://idp.example", realm: "r", clientId: "c" });
});

test.each([
  [{ IDP_URL: "idp.example" }, "IDP_URL"],
  [{ IDP_PORT: "x" }, "IDP_PORT"],
  [{ IDP_PORT: "0" }, "IDP_PORT"],
  [{ IDP_PORT: "99999" }, "IDP_PORT"],
  [{ IDP_REALM: "a b" }, "IDP_REALM"],
])("a bad value is refused with IDP_SEED_CONFIG_INVALID naming the variable (%#)", (env, field) => {
  const error = thrownBy(() => parseIdpEndpoint(env), IdpSeedError);
  expect(error.code).toBe("IDP_SEED_CONFIG_INVALID");
  expect(error.subject).toBe(field);
});
