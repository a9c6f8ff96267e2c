import { expect, test } from "bun:test";
import { thrownBy } from "@svc/testkit";
import {
  COMPONENTS_CLIENT_SECRET_DEFAULT,
  IdpSeedError,
  LOCAL_USER_PASSWORD_DEFAULT,
  parseSeedConfig,
} from "../index.ts";

const required = { IDP_BOOTSTRAP_ADMIN_PASSWORD: "admin-pw", IDP_LOCAL_USER_PASSWORD: "user-pw" };

const configError = (env: Record<string, string | undefined>) => thrownBy(() => parseSeedConfig(env), IdpSeedError);

test("defaults follow the spec: port 8082, realm svc, client svc-cli, admin idpadmin", () => {
  expect(parseSeedConfig({ ...required, HOME: "/ignored" })).toEqual({
    url: "http://127.0.0.1:8082",
    realm: "svc",
    clientId: "svc-cli",
    adminUser: "idpadmin",
    adminPassword: "admin-pw",
    userPassword: "user-pw",
    tenantId: "tenant-local",
    componentsClientSecret: "svc-local-components",
  });
});

test("IDP_PORT sets the port of the default URL; IDP_URL wins over it and loses its trailing slash", () => {
  expect(parseSeedConfig({ ...required, IDP_PORT: "18082" }).url).toBe("http://127.0.0.1:18082");
  const remote = { ...required, IDP_COMPONENTS_CLIENT_SECRET: "s" };
  expect(parseSeedConfig({ ...remote, IDP_PORT: "18082", IDP_URL: "https://idp.example/" }).url).toBe(
    "https://idp.example",
  );
});

test("the other variables are taken as given", () => {
  const options = parseSeedConfig({
    ...required,
    IDP_REALM: "other",
    IDP_CLIENT_ID: "cli2",
    IDP_BOOTSTRAP_ADMIN_USER: "root",
    IDP_LOCAL_TENANT_ID: "t-1",
  });
  expect(options).toMatchObject({ realm: "other", clientId: "cli2", adminUser: "root", tenantId: "t-1" });
});

test("without IDP_LOCAL_USER_PASSWORD an IdP on the local host gets the local default; another IdP refuses", () => {
  const admin = { IDP_BOOTSTRAP_ADMIN_PASSWORD: "admin-pw" };
  expect(parseSeedConfig(admin).userPassword).toBe(LOCAL_USER_PASSWORD_DEFAULT);
  expect(LOCAL_USER_PASSWORD_DEFAULT).toBe("svc-local-users");
  expect(
    parseSeedConfig({ ...admin, IDP_URL: "http://localhost:18082", IDP_LOCAL_USER_PASSWORD: "" }).userPassword,
  ).toBe(LOCAL_USER_PASSWORD_DEFAULT);
  const error = configError({ ...admin, IDP_URL: "https://idp.example" });
  expect(error.code).toBe("IDP_SEED_CONFIG_INVALID");
  expect(error.subject).toBe("IDP_LOCAL_USER_PASSWORD");
});

test("IDP_COMPONENTS_CLIENT_SECRET: taken as given; the local default only for an IdP on the local host", () => {
  expect(parseSeedConfig({ ...required, IDP_COMPONENTS_CLIENT_SECRET: "given" }).componentsClientSecret).toBe("given");
  expect(COMPONENTS_CLIENT_SECRET_DEFAULT).toBe("svc-local-components");
  expect(parseSeedConfig({ ...required, IDP_COMPONENTS_CLIENT_SECRET: "" }).componentsClientSecret).toBe(
    COMPONENTS_CLIENT_SECRET_DEFAULT,
  );
  const remote = { ...required, IDP_URL: "https://idp.example" };
  const error = configError(remote);
  expect(error.code).toBe("IDP_SEED_CONFIG_INVALID");
  expect(error.subject).toBe("IDP_COMPONENTS_CLIENT_SECRET");
  expect(parseSeedConfig({ ...remote, IDP_COMPONENTS_CLIENT_SECRET: "s" }).componentsClientSecret).toBe("s");
});

test.each([
  [{ IDP_LOCAL_USER_PASSWORD: "x" }, "IDP_BOOTSTRAP_ADMIN_PASSWORD"],
  [
    { IDP_BOOTSTRAP_ADMIN_PASSWORD: "x", IDP_URL: "https://idp.example", IDP_LOCAL_USER_PASSWORD: "" },
    "IDP_LOCAL_USER_PASSWORD",
  ],
  [{ ...required, IDP_PORT: "eighty" }, "IDP_PORT"],
  [{ ...required, IDP_PORT: "70000" }, "IDP_PORT"],
  [{ ...required, IDP_URL: "ftp://idp" }, "IDP_URL"],
  [{ ...required, IDP_REALM: "a/b" }, "IDP_REALM"],
])("a bad or missing value is refused with IDP_SEED_CONFIG_INVALID naming the variable (%#)", (env, field) => {
  const error = configError(env);
  expect(error.code).toBe("IDP_SEED_CONFIG_INVALID");
  expect(error.subject).toBe(field);
});
