/**
 * What a `*_HOST` setting a server listens on may hold, as a JSON-schema pattern for a config's TypeBox field: an
 * IPv4 address or host name (`0.0.0.0`, `127.0.0.1`, `metrics.svc.cluster.local`), or a bare IPv6 address (`::`,
 * `::1`, with a `%zone`: two colons at least, so `0.0.0.0:9464` is not one). Not a URL, a port or spaces: such a value is refused at start naming its field instead of
 * failing at the listen.
 */
export const LISTEN_HOST_PATTERN =
  "^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|[0-9A-Fa-f.]*:[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*(?:%[A-Za-z0-9_.-]+)?)$";
