/**
 * A package registry's URL as an operator writes it (issue 18's recipes, and the registries agent
 * profiles' dependencies come from, issue 26): https anywhere, plain http on loopback only (the
 * fixture registry in tests and the demo), no credentials, query or fragment, one canonical
 * spelling (a trailing slash) so the same registry gives the same recipe digest. Here, below both
 * lib/dependencies and lib/settings, so each can check it.
 */
import { z } from "zod";

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** https anywhere; plain http only on loopback (the fixture registry in tests and the demo). No credentials, query or fragment. */
export function checkRegistryUrl(value: string): { kind: "ok"; url: URL } | { kind: "refused"; reason: string } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { kind: "refused", reason: "not a URL" };
  }
  if (url.username || url.password) return { kind: "refused", reason: "a registry URL may not carry credentials" };
  if (url.search || url.hash) return { kind: "refused", reason: "a registry URL may not carry a query or fragment" };
  if (url.protocol === "https:") return { kind: "ok", url };
  if (url.protocol === "http:" && (LOOPBACK_HOSTS.has(url.hostname) || /^127\.\d+\.\d+\.\d+$/.test(url.hostname)))
    return { kind: "ok", url };
  return { kind: "refused", reason: "https, or http on loopback only" };
}

export const ZRegistryUrlSchema = z
  .string()
  .trim()
  .max(500)
  .superRefine((v, ctx) => {
    const check = checkRegistryUrl(v);
    if (check.kind === "refused") ctx.addIssue({ code: "custom", message: check.reason });
  })
  // one canonical spelling (a trailing slash), so the same registry gives the same recipe digest
  .transform((v) => {
    const url = new URL(v);
    if (!url.pathname.endsWith("/")) url.pathname += "/";
    return url.toString();
  });
