import { TokenError } from "./errors.ts";
import { readTokenFile } from "./token-file.ts";

export interface RefreshSources {
  /** `--from <file>`: a token file written by `issue --out`. */
  from?: string;
  /** `--stdin`: the refresh token is the text on standard input. */
  stdin?: boolean;
  /** SVC_REFRESH_TOKEN. */
  env?: string;
}

/**
 * Where `refresh` gets the refresh token: a token file, standard input or SVC_REFRESH_TOKEN, never an argument
 * (an offline refresh token lives for weeks, and arguments are visible to every local user in `ps` and /proc).
 * A flag wins over the variable; --from and --stdin together are refused.
 */
export async function refreshTokenFrom(sources: RefreshSources, readStdin: () => Promise<string>): Promise<string> {
  if (sources.from !== undefined && sources.stdin) {
    throw new TokenError("TOKEN_CONFIG_INVALID", "refresh: give one of --from <file> and --stdin, not both");
  }
  if (sources.from !== undefined) {
    const { refresh_token } = readTokenFile(sources.from);
    if (refresh_token === undefined) {
      throw new TokenError("TOKEN_FILE_INVALID", `token file ${sources.from} holds no refresh_token`, {
        advice: "issue a new token (token issue --user <name> --scope offline_access --out <file>)",
      });
    }
    return refresh_token;
  }
  if (sources.stdin) {
    const text = (await readStdin()).trim();
    if (text === "") throw new TokenError("TOKEN_CONFIG_INVALID", "refresh --stdin: standard input was empty");
    return text;
  }
  if (sources.env !== undefined) return sources.env;
  throw new TokenError(
    "TOKEN_CONFIG_INVALID",
    "refresh: give --from <token file>, --stdin (the refresh token on standard input) or SVC_REFRESH_TOKEN",
  );
}
