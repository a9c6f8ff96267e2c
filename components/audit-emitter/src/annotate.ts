import type { Metadata } from "@grpc/grpc-js";

/**
 * The one way a handler adds to its call's record: a `resource` and string `attributes`. Nothing else of the
 * handler's reaches the record; both pass through redaction when the record is built (`redact.ts`).
 */
export interface CallAnnotation {
  /** What the call acted on; replaces the interceptor's per-method resource function for this call. */
  resource?: string;
  /** Extra facts; a sensitive name is dropped, a secret-looking value becomes `[redacted]`. */
  attributes?: Readonly<Record<string, string>>;
}

/**
 * Keyed by the call's request `Metadata` object: the one object both the interceptor and the handler's `call`
 * hold (grpc-js hands the handler the very metadata the interceptors passed on; `call-link.ts`).
 */
const annotations = new WeakMap<Metadata, CallAnnotation>();

/** Adds to the record of `call` (the handler's own call object). Later calls merge over earlier ones. */
export function annotate(call: { readonly metadata: Metadata }, annotation: CallAnnotation): void {
  const before = annotations.get(call.metadata);
  annotations.set(call.metadata, {
    resource: annotation.resource ?? before?.resource,
    attributes:
      before?.attributes || annotation.attributes ? { ...before?.attributes, ...annotation.attributes } : undefined,
  });
}

/** What `annotate` collected for the call whose request metadata is `metadata`, if anything. */
export function annotationOf(metadata: Metadata): CallAnnotation | undefined {
  return annotations.get(metadata);
}
