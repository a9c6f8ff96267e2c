import { readFileSync } from "node:fs";

/** Builds the package's own configuration error naming `variable` (its error class and code stay the package's). */
export type SecretSettingError = (variable: string, message: string, cause?: unknown) => Error;

export interface SecretSettingOptions {
  /** What the secret is, for the message when neither variable is set (e.g. "the secret of client svc-components"). */
  what?: string;
  /** Which variable the error names when both are set: `name` (the default) or `name_FILE`. */
  bothNames?: "value" | "file";
  /** A further check of the secret: a message names the variable it came from (the secret is never in it). */
  check?: (secret: string) => string | undefined;
}

/** The value, or undefined when unset, empty or only whitespace (a blank variable counts as unset). */
function given(env: Record<string, string | undefined>, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === "" ? undefined : value;
}

/**
 * A secret given as exactly one of `name` (the value) and `name_FILE` (a file holding it, read here): neither, both,
 * an unreadable file or one holding nothing but whitespace is an error naming the variable, built by `makeError`.
 * The file's last line ending (`\n` or `\r\n`, as `echo secret > file` and Secret mounts leave it) is dropped; any
 * line break still at its end is an error rather than silently part of the secret or silently trimmed. The secret is
 * never put into a message.
 */
export function readSecretSetting(
  env: Record<string, string | undefined>,
  name: string,
  makeError: SecretSettingError,
  options: SecretSettingOptions = {},
): string {
  const fileName = `${name}_FILE`;
  const value = given(env, name);
  const file = given(env, fileName)?.trim();
  if (value !== undefined && file !== undefined) {
    throw makeError(options.bothNames === "file" ? fileName : name, `set either ${name} or ${fileName}, not both`);
  }
  if (value === undefined && file === undefined) {
    const what = options.what === undefined ? "" : ` (${options.what})`;
    throw makeError(name, `required${what}: set ${name}, or ${fileName} naming a file that holds it`);
  }
  const [secret, from] =
    value !== undefined ? [value, name] : [readSecretFile(file as string, fileName, makeError), fileName];
  const problem = options.check?.(secret);
  if (problem !== undefined) throw makeError(from, problem);
  return secret;
}

function readSecretFile(path: string, variable: string, makeError: SecretSettingError): string {
  let content: string;
  try {
    content = readFileSync(path, "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    throw makeError(variable, `cannot read ${JSON.stringify(path)} (${reason})`, error);
  }
  const secret = content.replace(/\r?\n$/, "");
  if (secret.trim() === "") throw makeError(variable, `${JSON.stringify(path)} is empty`);
  if (/[\r\n]$/.test(secret)) {
    throw makeError(variable, `${JSON.stringify(path)} ends in more than one line break`);
  }
  return secret;
}
