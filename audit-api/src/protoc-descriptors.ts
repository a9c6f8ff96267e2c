import type { PackageDefinition } from "@grpc/proto-loader";
import descriptor from "protobufjs/ext/descriptor/index.js";

interface MessageProto {
  name: string;
  field: { name: string; typeName?: string; jsonName?: string }[];
  nestedType: MessageProto[];
  options?: { mapEntry?: boolean };
}

/** protoc's (and protobuf-go's `MapEntryName`) name of a map field's entry message: `foo_bar` → `FooBarEntry`. */
export function mapEntryName(fieldName: string): string {
  let name = "";
  let upper = true;
  for (const c of fieldName) {
    if (c === "_") {
      upper = true;
      continue;
    }
    name += upper ? c.toUpperCase() : c;
    upper = false;
  }
  return `${name}Entry`;
}

/** protoc's `json_name` of a field: underscores dropped, the letter after each one upper-cased (`total_count` → `totalCount`). */
export function jsonName(fieldName: string): string {
  return fieldName.replace(/_+([^_]?)/g, (_, c: string) => c.toUpperCase());
}

function fixMessage(message: MessageProto, scope: string): void {
  const fullName = `${scope}.${message.name}`;
  for (const field of message.field) field.jsonName = jsonName(field.name);
  for (const nested of message.nestedType) {
    if (nested.options?.mapEntry) {
      const old = nested.name;
      const field = message.field.find((f) => f.typeName === old || f.typeName === `${fullName}.${old}`);
      if (field) {
        nested.name = mapEntryName(field.name);
        field.typeName = `${fullName}.${nested.name}`;
      }
    }
    fixMessage(nested, fullName);
  }
}

/**
 * Makes the file descriptors protobufjs (behind @grpc/proto-loader) serializes look as protoc's, for reflection
 * clients: protobufjs names a map field's entry message after the field (`Attributes`) where protoc names it
 * `AttributesEntry`, which protobuf-go, and so grpcurl ≥ 1.8.8, refuses ("invalid map: incorrect implicit map entry
 * name", fullstorydev/grpcurl#519); and with `keepCase` it sets each `json_name` to the field name, so grpcurl would
 * print `total_count` where every protoc-built server gives `totalCount`. Rewrites the serialized descriptors of
 * `definition` in place.
 */
export function protocCompatible(definition: PackageDefinition): void {
  const fixed = new Map<string, Buffer>();
  for (const value of Object.values(definition)) {
    const files = (value as { fileDescriptorProtos?: Buffer[] }).fileDescriptorProtos;
    if (!Array.isArray(files)) continue;
    files.forEach((bytes, i) => {
      const key = bytes.toString("base64");
      let result = fixed.get(key);
      if (!result) {
        const file = descriptor.FileDescriptorProto.decode(bytes) as unknown as {
          package?: string;
          messageType: MessageProto[];
        };
        for (const message of file.messageType) fixMessage(message, file.package ? `.${file.package}` : "");
        result = Buffer.from(descriptor.FileDescriptorProto.encode(file as never).finish());
        fixed.set(key, result);
      }
      files[i] = result;
    });
  }
}
