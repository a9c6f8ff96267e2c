import { createServiceTokenSource, type ServiceTokenSource } from "../../index.ts";
import { captureLogger } from "./test-issuer.ts";

/** The service token sources of one test file: each with its own captured log, all closed by `closeAll()`. */
export function serviceTokenSources(credentials: { clientId: string; clientSecret: string }) {
  const opened: ServiceTokenSource[] = [];
  return {
    /** A source for `issuer` (without credentials: auth disabled); `log` is what it logged. */
    open(options: { issuer: string; refreshAt?: number; withCredentials?: boolean }) {
      const capture = captureLogger();
      const source = createServiceTokenSource({
        issuer: options.issuer,
        credentials: options.withCredentials === false ? undefined : credentials,
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
