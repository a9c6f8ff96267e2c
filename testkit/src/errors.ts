type ErrorClass<E extends Error> = abstract new (...args: never[]) => E;

/** The error `promise` rejects with; fails the test when it resolves, or rejects with something not of `type`. */
export async function rejectionOf<E extends Error>(promise: Promise<unknown>, type: ErrorClass<E>): Promise<E> {
  let outcome: unknown;
  try {
    outcome = await promise;
  } catch (error) {
    if (error instanceof type) return error;
    throw error;
  }
  throw new Error(`expected a ${type.name}, but the call succeeded with ${JSON.stringify(outcome)}`);
}

/** The error `run` throws; fails the test when it returns, or throws something not of `type`. */
export function thrownBy<E extends Error>(run: () => unknown, type: ErrorClass<E>): E {
  let outcome: unknown;
  try {
    outcome = run();
  } catch (error) {
    if (error instanceof type) return error;
    throw error;
  }
  throw new Error(`expected a ${type.name}, but the call returned ${JSON.stringify(outcome)}`);
}
