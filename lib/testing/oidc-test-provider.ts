/**
 * A real OpenID Connect provider for tests (oidc-provider, the certified Node implementation) on
 * 127.0.0.1: discovery, authorization code + PKCE, signed ID tokens. Its users and their groups
 * are a Map the test changes between sign-ins (findAccount reads it each time), and it serves its
 * own login page — plain HTML with no outside resources, so a browser on it reaches only loopback.
 */
import { generateKeyPairSync, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import Provider, { type Configuration } from "oidc-provider";

export type TOidcTestAccount = {
  password: string;
  email: string;
  emailVerified: boolean;
  name?: string;
  groups: string[];
};

export type TOidcTestProvider = {
  issuer: string;
  /** login → account; change it between sign-ins (a group removed, a user added) */
  accounts: Map<string, TOidcTestAccount>;
  close: () => Promise<void>;
};

export type TStartOidcTestProviderOptions = {
  port?: number;
  client: { clientId: string; clientSecret: string; redirectUri: string };
  accounts?: Record<string, TOidcTestAccount>;
};

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function loginPage(uid: string, error?: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>School identity provider</title></head><body>
<h1>School identity provider</h1>
${error ? `<p role="alert">${escapeHtml(error)}</p>` : ""}
<form method="post" action="/interaction/${escapeHtml(uid)}">
<label>Username <input name="login" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Log in to the school</button>
</form></body></html>`;
}

async function readForm(request: http.IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > 64 * 1024) throw new Error("form too large");
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

export async function startOidcTestProvider(options: TStartOidcTestProviderOptions): Promise<TOidcTestProvider> {
  const accounts = new Map(Object.entries(options.accounts ?? {}));
  const server = http.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const configuration: Configuration = {
    clients: [
      {
        client_id: options.client.clientId,
        client_secret: options.client.clientSecret,
        redirect_uris: [options.client.redirectUri],
        response_types: ["code"],
        grant_types: ["authorization_code"],
      },
    ],
    jwks: { keys: [{ ...privateKey.export({ format: "jwk" }), kid: "test-key", use: "sig", alg: "RS256" }] as never },
    cookies: { keys: [randomBytes(32).toString("hex")] },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name", "groups"] },
    // Claims in the ID token itself (as Keycloak's mappers put them): next-auth reads only the ID token.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => true },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx, sub) {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return {
        accountId: sub,
        async claims() {
          return {
            sub,
            email: account.email,
            email_verified: account.emailVerified,
            name: account.name ?? sub,
            groups: [...account.groups],
          };
        },
      };
    },
  };
  const provider = new Provider(issuer, configuration);
  const handleOidc = provider.callback();
  server.on("request", (request: http.IncomingMessage, response: http.ServerResponse) => {
    const match = /^\/interaction\/([\w-]+)$/.exec(new URL(request.url ?? "/", issuer).pathname);
    if (!match) return void handleOidc(request, response);
    void (async () => {
      try {
        const details = await provider.interactionDetails(request, response);
        if (request.method !== "POST") {
          response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(loginPage(details.uid));
          return;
        }
        const form = await readForm(request);
        const login = form.get("login") ?? "";
        const account = accounts.get(login);
        if (!account || account.password !== form.get("password")) {
          response
            .writeHead(200, { "content-type": "text/html; charset=utf-8" })
            .end(loginPage(details.uid, "Unknown user or wrong password."));
          return;
        }
        // Login and consent in one step: the school's own app needs no consent screen.
        const grant = new provider.Grant({ accountId: login, clientId: String(details.params.client_id) });
        grant.addOIDCScope(String(details.params.scope));
        const grantId = await grant.save();
        await provider.interactionFinished(request, response, { login: { accountId: login }, consent: { grantId } });
      } catch (error) {
        if (!response.headersSent)
          response.writeHead(400, { "content-type": "text/plain" }).end((error as Error).message);
      }
    })();
  });
  return {
    issuer,
    accounts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())).then(() => undefined),
  };
}
