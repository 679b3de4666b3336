import "server-only";
import { readFileSync } from "node:fs";
import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import type { OAuthConfig } from "next-auth/providers/oauth";
import { authenticate } from "@/lib/auth/authenticate";
import {
  parseTrustedProxies,
  resolveClientAddress,
  resolveClientAddressFromPeerHeader,
} from "@/lib/auth/client-address";
import { parseRoles } from "@/lib/auth/permissions";
import { resolveSessionSecret } from "@/lib/auth/secret";
import { signInWithOidc, type TOidcRefusal } from "@/lib/auth/sign-in-with-oidc";
import { getDb } from "@/lib/db/client";
import { getEnv, type TEnv } from "@/lib/env";
import { isAppError } from "@/lib/errors";

const SESSION_MAX_AGE_SECONDS = 8 * 60 * 60;

/**
 * Next.js route handlers do not expose the socket address. Under the app's own server
 * (scripts/web-server.ts: `npm start`, `npm run dev`) the last hop of X-Forwarded-For is that
 * address, written by the server over whatever an untrusted client sent; under plain `next dev`
 * it is unknown (null: only the per-account delay applies) instead of a client-chosen header value.
 */
function clientAddressOf(headers: Record<string, unknown> | undefined): string | null {
  const env = getEnv();
  const forwarded = headers?.["x-forwarded-for"];
  const forwardedFor =
    typeof forwarded === "string" || Array.isArray(forwarded) ? (forwarded as string | string[]) : undefined;
  const trustedProxies = parseTrustedProxies(env.TRUSTED_PROXIES);
  if (env.SCHOOLCORE_WEB_SERVER === "custom") return resolveClientAddressFromPeerHeader(forwardedFor, trustedProxies);
  return resolveClientAddress({ forwardedFor, socketAddress: undefined, trustedProxies });
}

/** The error code the sign-in page shows for each refusal (app/(auth)/signin/signin-form.tsx). */
const OIDC_REFUSAL_ERRORS = {
  wrong_issuer: "OIDC_REFUSED",
  claims_invalid: "OIDC_REFUSED",
  no_group: "OIDC_NO_GROUP",
  email_missing: "OIDC_EMAIL_MISSING",
  email_unverified: "OIDC_EMAIL_UNVERIFIED",
  email_linked_elsewhere: "OIDC_EMAIL_UNVERIFIED",
  disabled: "OIDC_DISABLED",
} as const satisfies Record<TOidcRefusal, string>;

export const OIDC_PROVIDER_ID = "oidc";

/**
 * The school's OpenID Connect provider through next-auth's own OAuth/OIDC support (openid-client):
 * discovery, PKCE, state and nonce, and the ID token's signature, audience, issuer and expiry are
 * all checked by the library; we never read an access token or the userinfo endpoint.
 */
function oidcProviderOf(env: TEnv): OAuthConfig<Record<string, unknown>> | null {
  if (!env.OIDC_ISSUER || !env.OIDC_CLIENT_ID || !env.OIDC_CLIENT_SECRET_FILE) return null;
  return {
    id: OIDC_PROVIDER_ID,
    name: env.OIDC_NAME,
    type: "oauth",
    wellKnown: `${env.OIDC_ISSUER.replace(/\/$/, "")}/.well-known/openid-configuration`,
    issuer: env.OIDC_ISSUER,
    clientId: env.OIDC_CLIENT_ID,
    clientSecret: readFileSync(env.OIDC_CLIENT_SECRET_FILE, "utf8").trim(),
    idToken: true,
    checks: ["pkce", "state", "nonce"],
    authorization: { params: { scope: env.OIDC_SCOPES } },
    // next-auth wants an id; the real decision is made in the signIn callback from the verified claims.
    profile: (claims) => ({ id: String(claims.sub), email: typeof claims.email === "string" ? claims.email : null }),
  };
}

/** For the sign-in page: whether to offer the provider, and its name. */
export function getOidcSignInOption(): { id: string; name: string } | null {
  const env = getEnv();
  return env.OIDC_ISSUER ? { id: OIDC_PROVIDER_ID, name: env.OIDC_NAME } : null;
}

let cachedOptions: NextAuthOptions | undefined;

export function getAuthOptions(): NextAuthOptions {
  cachedOptions ??= {
    secret: resolveSessionSecret(getEnv()),
    session: { strategy: "jwt", maxAge: SESSION_MAX_AGE_SECONDS },
    // Errors (a refused or failed OIDC sign-in) land on the sign-in page, which explains them.
    pages: { signIn: "/signin", error: "/signin" },
    providers: [
      CredentialsProvider({
        name: "Email and password",
        credentials: { email: { label: "Email", type: "email" }, password: { label: "Password", type: "password" } },
        async authorize(credentials, request) {
          try {
            const result = await authenticate({
              db: await getDb(),
              credentials,
              clientAddress: clientAddressOf(request?.headers as Record<string, unknown> | undefined),
            });
            if (result.kind === "refused" && result.reason === "local_sign_in_off") throw new Error("LOCAL_SIGNIN_OFF");
            if (result.kind === "refused") return null;
            return {
              id: result.actor.userId,
              email: result.actor.email,
              roles: [...result.actor.roles],
              sessionEpoch: result.sessionEpoch,
            };
          } catch (error) {
            // next-auth forwards the message as `error`; only typed, bounded codes leave here.
            if (isAppError(error) && error.code === "RATE_LIMITED") throw new Error("RATE_LIMITED");
            throw new Error("SIGNIN_UNAVAILABLE");
          }
        },
      }),
      ...[oidcProviderOf(getEnv())].filter((p) => p !== null),
    ],
    callbacks: {
      async signIn({ user, account, profile }) {
        if (account?.provider !== OIDC_PROVIDER_ID) return true;
        const result = await signInWithOidc(
          { db: await getDb(), issuer: getEnv().OIDC_ISSUER! },
          { claims: profile },
        ).catch(() => {
          // next-auth puts a thrown message in the URL: only a bounded code leaves here.
          throw new Error("SIGNIN_UNAVAILABLE");
        });
        if (result.kind === "refused") return `/signin?error=${OIDC_REFUSAL_ERRORS[result.reason]}`;
        // next-auth hands this same object to the jwt callback (no adapter): it carries our user, not the provider's.
        Object.assign(user, {
          id: result.actor.userId,
          email: result.actor.email,
          roles: [...result.actor.roles],
          sessionEpoch: result.sessionEpoch,
        });
        return true;
      },
      jwt({ token, user }) {
        if (user) {
          token.uid = user.id;
          token.roles = parseRoles((user as { roles?: unknown }).roles);
          // The user's session epoch at sign-in: a password reset moves it on and ends this token (resolveSessionActor).
          token.sessionEpoch = (user as { sessionEpoch?: unknown }).sessionEpoch;
        }
        return token;
      },
      session({ session, token }) {
        return {
          ...session,
          user: {
            email: session.user?.email ?? null,
            id: token.uid as string,
            roles: parseRoles(token.roles),
            sessionEpoch: token.sessionEpoch,
          },
        };
      },
    },
  };
  return cachedOptions;
}
