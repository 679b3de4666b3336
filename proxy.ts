/**
 * The proxy only redirects anonymous visitors and sets the CSP nonce. Authorisation happens in
 * every page, action and route handler (app/_server/guard.ts); never here alone.
 */
import { NextResponse, type NextRequest } from "next/server";
import { buildContentSecurityPolicy } from "./app/_server/csp";

const PROTECTED_PREFIXES = ["/teacher", "/operator"];
const SESSION_COOKIES = ["next-auth.session-token", "__Secure-next-auth.session-token"];

export function proxy(request: NextRequest) {
  const { pathname, search } = request.nextUrl;
  const hasSessionCookie = SESSION_COOKIES.some((name) => request.cookies.has(name));
  if (!hasSessionCookie && PROTECTED_PREFIXES.some((p) => pathname === p || pathname.startsWith(`${p}/`))) {
    const target = new URL("/signin", request.url);
    target.searchParams.set("callbackUrl", `${pathname}${search}`);
    return NextResponse.redirect(target);
  }
  const nonce = Buffer.from(crypto.randomUUID()).toString("base64");
  const csp = buildContentSecurityPolicy(nonce, process.env.NODE_ENV === "development");
  const requestHeaders = new Headers(request.headers);
  requestHeaders.set("x-nonce", nonce);
  requestHeaders.set("Content-Security-Policy", csp);
  const response = NextResponse.next({ request: { headers: requestHeaders } });
  response.headers.set("Content-Security-Policy", csp);
  return response;
}

export const config = {
  // The relay is not served by the web app at all (lib/relay/relay-server.ts, its own listener).
  // The agent-code upload is not proxied: for a request the proxy sees, Next reads the whole body
  // first (to clone it for the proxy, cut at 10 MB) — before the route's role check and its cap.
  // It is a JSON route that checks its own session; next.config.ts gives it a fixed CSP.
  matcher: [{ source: "/((?!_next/static|_next/image|favicon.ico|api/operator/agent-code).*)" }],
};
