import { createServiceTokenSource, type ServiceCredentials, type ServiceTokenSource } from "../../index.ts";
import { captureLogger } from "./test-issuer.ts";

/**
 * The service token sources of one test file: each with its own captured log, all closed by `closeAll()`. A source
 * presents `clientId` with the secret `open` is given, else the file's `clientSecret` (the real realm's secret is
 * known only once it is seeded).
 */
export function serviceTokenSources(defaults: { clientId: string; clientSecret?: string }) {
  const opened: ServiceTokenSource[] = [];
  const credentialsWith = (clientSecret = defaults.clientSecret): ServiceCredentials => {
    if (clientSecret === undefined) throw new Error("serviceTokenSources: no client secret given");
    return { clientId: defaults.clientId, clientSecret };
  };
  return {
    /** A source for `issuer` (without credentials: auth disabled); `log` is what it logged. */
    open(options: { issuer: string; refreshAt?: number; withCredentials?: boolean; clientSecret?: string }) {
      const capture = captureLogger();
      const source = createServiceTokenSource({
        issuer: options.issuer,
        credentials: options.withCredentials === false ? undefined : credentialsWith(options.clientSecret),
        refreshAt: options.refreshAt,
        logger: capture.logger,
      });
      opened.push(source);
      return { source, log: capture.text };
    },
    closeAll(): void {
      for (const source of opened.splice(0)) source.close();
    },
  };
}
