/** Which inherited variables a server must not see: its own settings come from the stack config only. */
export type EnvFilter = (key: string) => boolean;

/** A server's whole environment: the inherited one minus what `drop` names, then the server's own variables. */
export function serverEnv(
  inherited: Record<string, string | undefined>,
  own: Record<string, string> = {},
  drop?: EnvFilter,
): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(inherited)) {
    if (value !== undefined && !drop?.(key)) env[key] = value;
  }
  return { ...env, ...own };
}
