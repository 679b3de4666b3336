import "server-only";
import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { authenticate } from "@/lib/auth/authenticate";
import { parseTrustedProxies, resolveClientAddress, resolveClientAddressFromPeerHeader } from "@/lib/auth/client-address";
import { parseRoles } from "@/lib/auth/permissions";
import { resolveSessionSecret } from "@/lib/auth/secret";
import { getDb } from "@/lib/db/client";
import { getEnv } from "@/lib/env";
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
  const forwardedFor = typeof forwarded === "string" || Array.isArray(forwarded) ? (forwarded as string | string[]) : undefined;
  const trustedProxies = parseTrustedProxies(env.TRUSTED_PROXIES);
  if (env.SCHOOLCORE_WEB_SERVER === "custom") return resolveClientAddressFromPeerHeader(forwardedFor, trustedProxies);
  return resolveClientAddress({ forwardedFor, socketAddress: undefined, trustedProxies });
}

let cachedOptions: NextAuthOptions | undefined;

export function getAuthOptions(): NextAuthOptions {
  cachedOptions ??= {
    secret: resolveSessionSecret(getEnv()),
    session: { strategy: "jwt", maxAge: SESSION_MAX_AGE_SECONDS },
    pages: { signIn: "/signin" },
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
    ],
    callbacks: {
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
