/**
 * Sends one gRPC request as hand-written HTTP/2 frames over a plain TCP socket: the header list goes out exactly as
 * given (repeated fields, Latin-1 bytes such as U+00A0), which neither grpc-js nor node:http2 clients allow. The
 * answer is not decoded (that would need an HPACK decoder); tests observe the server side (handler, log) instead.
 */

/** HPACK integer with an N-bit prefix (RFC 7541 §5.1). */
function hpackInteger(value: number, prefixBits: number): number[] {
  const max = (1 << prefixBits) - 1;
  if (value < max) return [value];
  const out = [max];
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return out;
}

/** "Literal header field without indexing, new name", no Huffman coding (RFC 7541 §6.2.2). */
function hpackLiteral(name: string, value: string): number[] {
  const nameBytes = Buffer.from(name, "latin1");
  const valueBytes = Buffer.from(value, "latin1");
  return [
    0x00,
    ...hpackInteger(nameBytes.length, 7),
    ...nameBytes,
    ...hpackInteger(valueBytes.length, 7),
    ...valueBytes,
  ];
}

function frame(type: number, flags: number, streamId: number, payload: Uint8Array): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, payload]);
}

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
const SETTINGS = 0x4;
const HEADERS = 0x1;
const DATA = 0x0;
const END_STREAM = 0x1;
const END_HEADERS = 0x4;
const ACK = 0x1;

/**
 * One unary gRPC call to `path` on 127.0.0.1:`port` with the extra `metadata` fields (in order, repeats kept) and a
 * JSON-coded message. Returns a handle to close the connection once the test has seen what it waits for.
 */
export async function sendRawGrpcCall(
  port: number,
  path: string,
  metadata: ReadonlyArray<readonly [string, string]>,
  message: unknown = {},
): Promise<{ close(): void }> {
  const fields: Array<readonly [string, string]> = [
    [":method", "POST"],
    [":scheme", "http"],
    [":path", path],
    [":authority", `127.0.0.1:${port}`],
    ["content-type", "application/grpc"],
    ["te", "trailers"],
    ...metadata,
  ];
  const block = Uint8Array.from(fields.flatMap(([name, value]) => hpackLiteral(name, value)));
  const body = Buffer.from(JSON.stringify(message));
  const grpcMessage = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), body]);
  grpcMessage.writeUInt32BE(body.length, 1);
  let settingsAcked = false;
  const socket = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      open(s) {
        s.write(
          Buffer.concat([
            PREFACE,
            frame(SETTINGS, 0, 0, new Uint8Array()),
            frame(HEADERS, END_HEADERS, 1, block),
            frame(DATA, END_STREAM, 1, grpcMessage),
          ]),
        );
      },
      data(s) {
        // the server's SETTINGS come first; acknowledge them once so it keeps the connection open
        if (settingsAcked) return;
        settingsAcked = true;
        s.write(frame(SETTINGS, ACK, 0, new Uint8Array()));
      },
    },
  });
  return { close: () => socket.end() };
}
