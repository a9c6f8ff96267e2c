import { expect, test } from "bun:test";
import { thrownBy } from "@svc/testkit";
import { LicenseError, parseLicenseConfig } from "../index.ts";

test("SVC_LICENSE_FILE defaults to token.jwt; other variables are ignored", () => {
  expect(parseLicenseConfig({ SVC_LICENSE_PUBLIC_KEY_FILE: "/etc/svc/license.pub.pem", PATH: "/bin" })).toEqual({
    licenseFile: "token.jwt",
    publicKeyFile: "/etc/svc/license.pub.pem",
  });
  expect(
    parseLicenseConfig({ SVC_LICENSE_FILE: "/etc/svc/token.jwt", SVC_LICENSE_PUBLIC_KEY_FILE: "k.pem" }).licenseFile,
  ).toBe("/etc/svc/token.jwt");
});

test.each([
  [{}, "SVC_LICENSE_PUBLIC_KEY_FILE"],
  [{ SVC_LICENSE_PUBLIC_KEY_FILE: "" }, "SVC_LICENSE_PUBLIC_KEY_FILE"],
  [{ SVC_LICENSE_FILE: "", SVC_LICENSE_PUBLIC_KEY_FILE: "k.pem" }, "SVC_LICENSE_FILE"],
])("%j is rejected naming %s", (env, field) => {
  const error = thrownBy(() => parseLicenseConfig(env), LicenseError);
  expect(error.code).toBe("LICENSE_CONFIG_INVALID");
  expect(error.subject).toBe(field);
});
