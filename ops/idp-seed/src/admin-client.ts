import { IdpSeedError } from "./errors.ts";

export interface AdminCredentials {
  url: string;
  adminUser: string;
  adminPassword: string;
}

async function send(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
  } catch (error) {
    throw new IdpSeedError(
      "IDP_UNREACHABLE",
      `cannot reach the IdP at ${url}: ${String(error)}`,
      { subject: url },
      {
        cause: error,
      },
    );
  }
}

/**
 * Keycloak's admin REST API (`/admin/realms/...`) with a token of the bootstrap admin of the `master` realm
 * (password grant, client `admin-cli`); logs in again once when the token has expired.
 */
export class AdminClient {
  private token: string | undefined;

  constructor(private readonly credentials: AdminCredentials) {}

  async login(): Promise<void> {
    const { url, adminUser, adminPassword } = this.credentials;
    const response = await send(`${url}/realms/master/protocol/openid-connect/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "password",
        client_id: "admin-cli",
        username: adminUser,
        password: adminPassword,
      }),
    });
    const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (!response.ok || typeof body.access_token !== "string") {
      const reason = String(body.error_description ?? body.error ?? response.statusText);
      throw new IdpSeedError(
        "IDP_ADMIN_AUTH_FAILED",
        `the IdP refused the admin login of ${adminUser} in realm master (HTTP ${response.status}: ${reason}); check IDP_BOOTSTRAP_ADMIN_USER / IDP_BOOTSTRAP_ADMIN_PASSWORD`,
        { subject: adminUser, status: response.status },
      );
    }
    this.token = body.access_token;
  }

  /** One admin call; `path` is below `/admin/realms`. Returns undefined for 404 when `allow404` is set. */
  async call(method: string, path: string, body?: unknown, allow404 = false): Promise<Response | undefined> {
    if (this.token === undefined) await this.login();
    let response = await this.once(method, path, body);
    if (response.status === 401) {
      await this.login();
      response = await this.once(method, path, body);
    }
    if (allow404 && response.status === 404) return undefined;
    if (!response.ok) {
      const text = await response.text().catch(() => "");
      throw new IdpSeedError(
        "IDP_ADMIN_REQUEST_FAILED",
        `${method} /admin/realms${path}: HTTP ${response.status} ${text.slice(0, 300)}`,
        { subject: path, status: response.status },
      );
    }
    return response;
  }

  async get<T>(path: string): Promise<T | undefined> {
    const response = await this.call("GET", path, undefined, true);
    return response === undefined ? undefined : ((await response.json()) as T);
  }

  async getList<T>(path: string): Promise<T[]> {
    return (await this.get<T[]>(path)) ?? [];
  }

  async post(path: string, body?: unknown): Promise<void> {
    await this.call("POST", path, body);
  }

  async put(path: string, body?: unknown): Promise<void> {
    await this.call("PUT", path, body);
  }

  async delete(path: string, body?: unknown): Promise<void> {
    await this.call("DELETE", path, body);
  }

  private once(method: string, path: string, body: unknown): Promise<Response> {
    return send(`${this.credentials.url}/admin/realms${path}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }
}
