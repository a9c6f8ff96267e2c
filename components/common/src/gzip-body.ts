/**
 * A gzip object version's lines: stored with Content-Encoding gzip, the GET's body may or may not have been
 * decoded already (by fetch), so the magic bytes decide (the audit API's reads, the writer's `rebuild-index`).
 */
export function decodeGzipBody(body: Uint8Array): Uint8Array {
  const gzipped = body[0] === 0x1f && body[1] === 0x8b;
  return gzipped ? Bun.gunzipSync(body as Uint8Array<ArrayBuffer>) : body;
}
