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

test("the local stack's SVC_STACK_IDP_URL is used when neither IDP_URL nor IDP_PORT is set", () => {
  const stack = { SVC_STACK_IDP_URL: "http://127.0.0.1:39001/" };
  expect(parseIdpEndpoint(stack).url).toBe("http://127.0.0.1:39001");
  expect(parseIdpEndpoint({ ...stack, IDP_PORT: "18082" }).url).toBe("http://127.0.0.1:18082");
  expect(parseIdpEndpoint({ ...stack, IDP_URL: "https://idp.example" }).url).toBe("https://idp.example");
  expect(parseIdpEndpoint({ SVC_STACK_IDP_URL: "" }).url).toBe("http://127.0.0.1:8082");
});

test.each([
  [{ IDP_URL: "idp.example" }, "IDP_URL"],
  [{ SVC_STACK_IDP_URL: "127.0.0.1:8082" }, "SVC_STACK_IDP_URL"],
  [{ IDP_PORT: "x" }, "IDP_PORT"],
  [{ IDP_PORT: "0" }, "IDP_PORT"],
  [{ IDP_PORT: "99999" }, "IDP_PORT"],
  [{ IDP_REALM: "a b" }, "IDP_REALM"],
])("a bad value is refused with IDP_SEED_CONFIG_INVALID naming the variable (%#)", (env, field) => {
  const error = thrownBy(() => parseIdpEndpoint(env), IdpSeedError);
  expect(error.code).toBe("IDP_SEED_CONFIG_INVALID");
  expect(error.subject).toBe(field);
});
