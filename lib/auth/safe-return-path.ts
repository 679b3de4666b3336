/**
 * Where the sign-in page may send a user back to. A return path is attacker-controlled (it
 * arrives as `callbackUrl`), so only a same-origin path survives: the value is parsed as a URL
 * against the app's own origin and must resolve to that origin. Control characters and
 * whitespace are refused outright — browsers strip tabs and newlines while parsing, which is how
 * `/\t/evil.example` became `//evil.example` (issue 12, item 3).
 */

/** A placeholder origin: only the comparison matters, never the host itself. */
const APP_ORIGIN = "http://app.invalid";
const MAX_RETURN_PATH_LENGTH = 2048;
// Control characters, every Unicode space and the backslash: exactly what a browser would strip or reinterpret.
const UNSAFE_CHARACTERS = /[\u0000-\u0020\u007f-\u00a0\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f\u3000\ufeff\\]/;

export function safeReturnPath(value: string | undefined, appOrigin: string = APP_ORIGIN): string {
  if (!value || value.length > MAX_RETURN_PATH_LENGTH || !value.startsWith("/") || UNSAFE_CHARACTERS.test(value))
    return "/";
  let parsed: URL;
  try {
    parsed = new URL(value, appOrigin);
  } catch {
    return "/";
  }
  if (parsed.origin !== new URL(appOrigin).origin) return "/";
  const path = `${parsed.pathname}${parsed.search}${parsed.hash}`;
  // The normalised path must still be a single-slash path: "//host" would be protocol-relative.
  return path.startsWith("/") && !path.startsWith("//") ? path : "/";
}
