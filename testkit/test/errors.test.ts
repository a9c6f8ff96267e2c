import { expect, test } from "bun:test";
import { rejectionOf, thrownBy } from "../index.ts";

class CodedError extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

test("rejectionOf returns the rejection of the expected class", async () => {
  const error = await rejectionOf(Promise.reject(new CodedError("E_ONE")), CodedError);
  expect(error.code).toBe("E_ONE");
});

test("rejectionOf fails when the promise resolves, or rejects with another class", async () => {
  await expect(rejectionOf(Promise.resolve(42), CodedError)).rejects.toThrow("succeeded with 42");
  await expect(rejectionOf(Promise.reject(new TypeError("other")), CodedError)).rejects.toThrow("other");
});

test("thrownBy returns the thrown error of the expected class and fails otherwise", () => {
  expect(
    thrownBy(() => {
      throw new CodedError("E_TWO");
    }, CodedError).code,
  ).toBe("E_TWO");
  expect(() => thrownBy(() => "fine", CodedError)).toThrow('returned "fine"');
});
