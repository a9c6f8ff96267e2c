import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Client, credentials, type GrpcObject, loadPackageDefinition, type Metadata } from "@grpc/grpc-js";
import { loadFileDescriptorSetFromBuffer, loadSync } from "@grpc/proto-loader";

/**
 * What grpcurl does without a proto file: ask the server's reflection service (`grpc.reflection.v1`) for its
 * services and for the file descriptors that define a symbol, build the messages from those descriptors only, and
 * call a method with a JSON-shaped request.
 */
export class ReflectionClient {
  private readonly client: Client & Record<string, (...args: unknown[]) => unknown>;

  constructor(private readonly address: string) {
    const root = dirname(fileURLToPath(import.meta.resolve("@grpc/reflection")));
    const proto = join(root, "../proto/grpc/reflection/v1/reflection.proto");
    const reflection = loadPackageDefinition(loadSync(proto, { keepCase: true })) as GrpcObject;
    const Service = ((reflection.grpc as GrpcObject).reflection as GrpcObject).v1 as GrpcObject;
    const Constructor = Service.ServerReflection as unknown as new (
      address: string,
      creds: ReturnType<typeof credentials.createInsecure>,
    ) => Client & Record<string, (...args: unknown[]) => unknown>;
    this.client = new Constructor(address, credentials.createInsecure());
  }

  private ask(request: Record<string, unknown>): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const open = this.client.ServerReflectionInfo as () => NodeJS.ReadWriteStream;
      const call = open.call(this.client);
      const answers: Record<string, unknown>[] = [];
      call.on("data", (answer: Record<string, unknown>) => answers.push(answer));
      call.on("error", reject);
      call.on("end", () => resolve(answers[0] as Record<string, unknown>));
      call.write(request as never);
      call.end();
    });
  }

  async listServices(): Promise<string[]> {
    const answer = await this.ask({ list_services: "" });
    const services = (answer.list_services_response as { service: { name: string }[] }).service;
    return services.map((s) => s.name);
  }

  /** The serialized FileDescriptorProtos of the file defining `symbol` and its imports. */
  async filesContaining(symbol: string): Promise<Buffer[]> {
    const answer = await this.ask({ file_containing_symbol: symbol });
    if (answer.error_response) throw new Error(JSON.stringify(answer.error_response));
    return (answer.file_descriptor_response as { file_descriptor_proto: Buffer[] }).file_descriptor_proto;
  }

  /** A client of `service` built from reflected descriptors only. */
  async serviceClient(service: string): Promise<Client & Record<string, (...args: unknown[]) => unknown>> {
    const files = await this.filesContaining(service);
    // FileDescriptorSet { repeated FileDescriptorProto file = 1; }: each file as field 1, length-delimited.
    const set = Buffer.concat(files.flatMap((file) => [Buffer.from([0x0a, ...varint(file.length)]), file]));
    const definition = loadFileDescriptorSetFromBuffer(set, { keepCase: true, longs: Number, enums: String });
    let node: unknown = loadPackageDefinition(definition);
    for (const part of service.split(".")) node = (node as Record<string, unknown>)[part];
    const Constructor = node as new (
      address: string,
      creds: ReturnType<typeof credentials.createInsecure>,
    ) => Client & Record<string, (...args: unknown[]) => unknown>;
    return new Constructor(this.address, credentials.createInsecure());
  }

  close(): void {
    this.client.close();
  }
}

function varint(value: number): number[] {
  const bytes: number[] = [];
  let rest = value;
  while (rest > 0x7f) {
    bytes.push((rest & 0x7f) | 0x80);
    rest >>>= 7;
  }
  bytes.push(rest);
  return bytes;
}

/** A unary call on a dynamic client, as a promise. */
export function unary<T>(
  client: Record<string, (...args: unknown[]) => unknown>,
  method: string,
  request: Record<string, unknown>,
  metadata: Metadata,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const call = client[method];
    if (!call) throw new Error(`no method ${method}`);
    call.call(client, request, metadata, (error: Error | null, answer: T) => (error ? reject(error) : resolve(answer)));
  });
}
