import { connect } from "node:net";
import { hostname } from "node:os";
import { AuditCliError } from "../errors.ts";
import { DELIVERY_TIMEOUT_MS, type SiemSink } from "./siem-sink.ts";
import { formatSyslog, frame } from "./syslog-format.ts";

/**
 * Syslog over TCP: RFC 5424 messages in RFC 6587 octet-counting frames, one connection per batch. Plain syslog has
 * no acknowledgement, so the batch counts as received when the receiver, having read up to the end the CLI
 * signals with a half-close, closes the connection too. A refused connection, a reset, or no close within 30 s is
 * retried (the whole batch again).
 */
export class SyslogTcpSink implements SiemSink {
  readonly target: string;
  private readonly host = hostname();

  constructor(private readonly address: { host: string; port: number }) {
    this.target = `syslog+tcp://${address.host}:${address.port}`;
  }

  deliver(records: readonly Record<string, unknown>[]): Promise<void> {
    const payload = Buffer.concat(records.map((record) => frame(formatSyslog(record, this.host))));
    return new Promise<void>((resolve, reject) => {
      const socket = connect({ host: this.address.host, port: this.address.port, allowHalfOpen: true });
      let peerEnded = false;
      let settled = false;
      const fail = (why: string, cause?: unknown) => {
        if (settled) return;
        settled = true;
        socket.destroy();
        reject(
          new AuditCliError("AUDIT_CLI_SIEM_UNAVAILABLE", `${this.target}: ${why}`, {
            subject: this.target,
            canRetry: true,
            cause,
          }),
        );
      };
      socket.setTimeout(DELIVERY_TIMEOUT_MS, () => fail(`no close within ${DELIVERY_TIMEOUT_MS} ms`));
      socket.on("error", (error) => fail(String(error), error));
      socket.on("data", () => {});
      socket.on("end", () => {
        peerEnded = true;
        socket.end();
      });
      socket.on("close", () => {
        if (settled) return;
        if (!peerEnded) return fail("connection closed before the receiver finished");
        settled = true;
        resolve();
      });
      socket.on("connect", () => {
        socket.end(payload);
      });
    });
  }
}
