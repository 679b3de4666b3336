/**
 * The typed forms of operator settings: which field edits which path of a setting's value, in
 * which unit, and how the submitted strings become the value the registry's zod schema judges.
 * Shared by the client form (live preview) and the server action (the value actually saved), so
 * the preview shows exactly what would be written. Pure: no server or browser imports.
 */

export type TUnit = "s" | "ms" | "count" | "MiB" | "GiB" | "bytes";

type TBase = {
  name: string;
  label: string;
  hint?: string;
  /** shown only (and submitted only) when another field has one of these values */ onlyWhen?: { field: string; values: string[] };
};

export type TSettingField =
  /** `isNullable`: blank = null (e.g. "no cap") instead of the schema's default */
  | (TBase & { kind: "number"; unit: TUnit; isNullable?: boolean })
  /** true/false, chosen from two labelled options */
  | (TBase & { kind: "boolean"; trueLabel: string; falseLabel: string })
  /** a record of numbers, one `key = number` per line */
  | (TBase & { kind: "map"; unit: TUnit; placeholder?: string })
  /** an array of objects, one per line, its columns separated by commas (blank trailing optional columns left out) */
  | (TBase & { kind: "records"; columns: readonly { name: string; isNumber?: boolean }[]; placeholder?: string })
  | (TBase & { kind: "select"; options: { value: string; label: string }[] })
  | (TBase & { kind: "text"; placeholder?: string })
  /** an array of strings, one per line */
  | (TBase & { kind: "lines" })
  /** micro-dollars, edited in dollars; `isNullable`: blank = none */
  | (TBase & { kind: "dollars"; isNullable?: boolean });

const bytes = (name: string, label: string, hint?: string): TSettingField => ({ kind: "number", unit: "bytes", name, label, hint });

const IMAGE_FIELDS: TSettingField[] = [
  {
    kind: "select",
    name: "type",
    label: "Source",
    options: [
      { value: "smolmachine", label: "smolmachine (preloaded in the tenant)" },
      { value: "image", label: "registry image (pinned by digest)" },
    ],
    hint: "Seed 001, finding A: a guest whose network is blocked cannot pull a registry image, so the adapter refuses that combination before any request. Preload the image as a tenant smolmachine.",
  },
  { kind: "text", name: "reference", label: "Reference", placeholder: "school-core/node24 or name@sha256:…" },
];

const HTTP_UPSTREAM = { field: "kind", values: ["openai", "anthropic"] };

export const SETTING_FORMS = {
  "task.limits": [
    { kind: "number", unit: "s", name: "wallClockSeconds", label: "Wall clock" },
    { kind: "number", unit: "count", name: "cpus", label: "CPUs" },
    { kind: "number", unit: "MiB", name: "memoryMb", label: "Memory" },
    { kind: "number", unit: "GiB", name: "diskGb", label: "Disk" },
    { kind: "number", unit: "count", name: "maxProcesses", label: "Processes" },
    bytes("maxExecOutputBytes", "Output kept per command"),
    bytes("maxArchiveBytes", "Candidate archive"),
    bytes("maxResultBytes", "result.json"),
    bytes("maxReportBytes", "Student report"),
    bytes("maxUploadBytes", "Upload into the guest", "repository.tar and the guest programs"),
    { kind: "number", unit: "count", name: "relay.maxRequests", label: "Relay requests" },
    bytes("relay.maxBytes", "Relay bytes in total"),
    bytes("relay.maxRequestBytes", "Relay request size"),
    bytes("relay.maxResponseBytes", "Relay response size"),
    {
      kind: "number",
      unit: "count",
      name: "relay.maxTokens",
      label: "Relay tokens (input + output)",
      hint: "The task's token budget over all its model calls; its worst-case cost at the model price is reserved against the spend ceilings when the task's relay capability is issued.",
    },
    {
      kind: "select",
      name: "relayChannel",
      label: "Relay channel",
      options: [
        { value: "mailbox", label: "mailbox (network blocked, strongest)" },
        { value: "http", label: "http (one scoped egress to the relay)" },
      ],
    },
  ],
  "guest.image": IMAGE_FIELDS,
  "verifier.image": IMAGE_FIELDS,
  "guest.agent": [
    {
      kind: "lines",
      name: "command",
      label: "Command",
      hint: "One argument per line; no shell unless you name one. Runs inside the guest only.",
    },
  ],
  "task.overrideMaxima": [
    { kind: "number", unit: "s", name: "wallClockSeconds", label: "Wall clock at most" },
    { kind: "number", unit: "count", name: "cpus", label: "CPUs at most" },
    { kind: "number", unit: "MiB", name: "memoryMb", label: "Memory at most" },
    { kind: "number", unit: "GiB", name: "diskGb", label: "Disk at most" },
  ],
  "task.retry": [
    {
      kind: "number",
      unit: "count",
      name: "maxAutomaticRetries",
      label: "Automatic retries",
      hint: "Transient provider errors only (5xx, timeouts before a create was acknowledged); 0 = never. Integrity failures are never retried.",
    },
    { kind: "number", unit: "s", name: "backoffSeconds", label: "First wait", hint: "Each further retry waits twice as long." },
  ],
  "machines.concurrency": [
    {
      kind: "number",
      unit: "count",
      name: "maxMachines",
      label: "Cap for every substrate",
      isNullable: true,
      hint: "Student, verifier and builder guests alive at once on one substrate; a task waits in the queue (fairly across repositories) until a slot is free. Blank = no cap.",
    },
    {
      kind: "map",
      unit: "count",
      name: "bySubstrate",
      label: "Per substrate (overrides the cap above)",
      placeholder: "local = 4",
      hint: "One “substrate label = number” per line, e.g. “local = 4”; the label is the one shown on the Machines page. Blank = none.",
    },
  ],
  "review.separationOfDuties": [
    {
      kind: "boolean",
      name: "enabled",
      label: "Separation of duties",
      trueLabel: "on: whoever created a task may not approve it",
      falseLabel: "off: the creator of a task may approve it too",
      hint: "Applies to approvals only; the creator may still reject or request changes.",
    },
  ],
  "auth.oidc": [
    {
      kind: "text",
      name: "groupsClaim",
      label: "Groups claim",
      placeholder: "groups",
      hint: "The ID token claim that lists the person's groups (Keycloak: the “groups” mapper, added to the ID token).",
    },
    {
      kind: "lines",
      name: "teacherGroups",
      label: "Teacher groups",
      hint: "One group per line, exactly as the provider writes it (Keycloak with full paths: “/teachers”). Re-read at every sign-in.",
    },
    { kind: "lines", name: "operatorGroups", label: "Operator groups", hint: "One group per line." },
    {
      kind: "boolean",
      name: "refuseWithoutGroup",
      label: "A person in none of these groups",
      trueLabel: "is refused, with a message on the sign-in page",
      falseLabel: "is signed in with no role",
    },
    {
      kind: "select",
      name: "localSignIn",
      label: "Sign-in with a password",
      options: [
        { value: "everyone", label: "everyone with a local account" },
        { value: "operatorsOnly", label: "operators only (everyone else uses the identity provider)" },
      ],
      hint: "Operators keep the password sign-in as the way in when the identity provider is down.",
    },
  ],
  "review.anonymous": [
    {
      kind: "boolean",
      name: "enabled",
      label: "Anonymous review",
      trueLabel: "on: teachers do not see an agent's owner until a decision is recorded",
      falseLabel: "off: the owner is shown beside the agent",
      hint: "Applies to the review queue, the comparison of attempts and the review page.",
    },
  ],
  "probe.externalTargets": [
    {
      kind: "records",
      name: "targets",
      label: "Targets",
      columns: [{ name: "label" }, { name: "protocol" }, { name: "host" }, { name: "port", isNumber: true }, { name: "name" }],
      placeholder: "metadata, tcp, 169.254.169.254, 80",
      hint: "One “label, protocol (tcp, udp or dns), IP address, port[, DNS name for dns]” per line: addresses outside this host that a guest must NOT reach, for a hosted substrate. Empty by default: P2 then probes loopback only.",
    },
  ],
  "review.rounds": [
    {
      kind: "number",
      unit: "count",
      name: "maxRounds",
      label: "Review rounds per task",
      hint: "How many times a task may run: the first run plus the revisions a teacher asks for with “Request changes”. Past it the button explains that the limit is reached.",
    },
  ],
  "spend.ceilings": [
    {
      kind: "dollars",
      name: "monthlyGlobalMicros",
      label: "Per calendar month (UTC), all tasks",
      isNullable: true,
      hint: "Blank = no monthly ceiling. Rolls over by itself on the 1st.",
    },
    { kind: "dollars", name: "monthlyPerTaskMicros", label: "Per calendar month, one task", isNullable: true },
    { kind: "dollars", name: "globalMicros", label: "Lifetime, all tasks" },
    { kind: "dollars", name: "perTaskMicros", label: "Lifetime, one task (all its attempts)" },
  ],
  "spend.rates": [
    {
      kind: "dollars",
      name: "cpuHourMicros",
      label: "Per CPU-hour",
      hint: "Used when the provider's plan states no rate; the higher of the two is used.",
    },
    { kind: "dollars", name: "memoryGbHourMicros", label: "Per GB-hour of memory" },
  ],
  "relay.upstream": [
    {
      kind: "select",
      name: "kind",
      label: "Kind",
      options: [
        { value: "scripted", label: "scripted (canned answers, the demo)" },
        { value: "openai", label: "OpenAI-compatible chat completions" },
        { value: "anthropic", label: "Anthropic messages" },
      ],
    },
    { kind: "text", name: "scriptFile", label: "Script file (absolute path)", onlyWhen: { field: "kind", values: ["scripted"] } },
    {
      kind: "text",
      name: "endpoint",
      label: "Endpoint URL",
      placeholder: "https://api.example.com/v1/chat/completions",
      onlyWhen: HTTP_UPSTREAM,
    },
    { kind: "text", name: "model", label: "Model", onlyWhen: HTTP_UPSTREAM },
    {
      kind: "text",
      name: "credentialFile",
      label: "Credential file (absolute path)",
      hint: "The path of a file in DATA_DIR/credentials/ holding the key — never the key itself. Read at each call.",
      onlyWhen: HTTP_UPSTREAM,
    },
    { kind: "number", unit: "ms", name: "connectTimeoutMs", label: "Connect timeout", onlyWhen: HTTP_UPSTREAM },
    { kind: "number", unit: "ms", name: "requestTimeoutMs", label: "Request timeout", onlyWhen: HTTP_UPSTREAM },
    { kind: "number", unit: "count", name: "defaultMaxTokens", label: "Default max tokens", onlyWhen: HTTP_UPSTREAM },
    { kind: "text", name: "anthropicVersion", label: "anthropic-version", onlyWhen: { field: "kind", values: ["anthropic"] } },
    bytes("maxResponseBytes", "Upstream response size"),
  ],
  "relay.pricing": [
    {
      kind: "dollars",
      name: "inputMicrosPerMTok",
      label: "Input tokens, per million",
      hint: "What the pinned upstream bills per million input (prompt) tokens, in US$: e.g. 3 for $3.00 / MTok. 0 = free (the scripted demo transport).",
    },
    {
      kind: "dollars",
      name: "outputMicrosPerMTok",
      label: "Output tokens, per million",
      hint: "Per million output (completion) tokens, in US$. A capability keeps the price it was issued under; its whole token budget at the higher price is reserved against the spend ceilings.",
    },
  ],
  "publish.github": [
    {
      kind: "text",
      name: "apiBaseUrl",
      label: "API base URL",
      placeholder: "https://api.github.com",
      hint: "GitHub, a GitHub Enterprise /api/v3 URL, or the local forge. https (plain http only to loopback).",
    },
    {
      kind: "text",
      name: "tokenFile",
      label: "Token file (absolute path)",
      hint: "The path of a file in DATA_DIR/credentials/ holding the token (first line) — never the token itself.",
    },
    { kind: "number", unit: "ms", name: "requestTimeoutMs", label: "API request timeout" },
    { kind: "number", unit: "ms", name: "pushTimeoutMs", label: "Push timeout" },
  ],
} as const satisfies Record<string, readonly TSettingField[]>;

export type TFormSettingKey = keyof typeof SETTING_FORMS;
export const FORM_SETTING_KEYS = Object.keys(SETTING_FORMS) as TFormSettingKey[];

export function isFormSettingKey(key: string): key is TFormSettingKey {
  return Object.hasOwn(SETTING_FORMS, key);
}

/** The form's own field names: dotted paths, made safe for ids and FormData. */
export function fieldsOf(key: TFormSettingKey): readonly TSettingField[] {
  return SETTING_FORMS[key];
}

function readPath(value: unknown, path: string): unknown {
  return path
    .split(".")
    .reduce<unknown>((v, part) => (v && typeof v === "object" ? (v as Record<string, unknown>)[part] : undefined), value);
}

function writePath(target: Record<string, unknown>, path: string, value: unknown) {
  const parts = path.split(".");
  let node = target;
  for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
  node[parts.at(-1)!] = value;
}

/** The text an input starts with, from the current value. */
export function initialTextOf(field: TSettingField, current: unknown): string {
  const value = readPath(current, field.name);
  if (value === undefined || value === null) return "";
  if (field.kind === "lines") return Array.isArray(value) ? value.join("\n") : "";
  if (field.kind === "map")
    return typeof value === "object"
      ? Object.entries(value as Record<string, unknown>)
          .map(([k, v]) => `${k} = ${String(v)}`)
          .join("\n")
      : "";
  if (field.kind === "records") return Array.isArray(value) ? value.map((row) => recordLineOf(field.columns, row)).join("\n") : "";
  if (field.kind === "dollars") return typeof value === "number" ? String(value / 1_000_000) : "";
  return String(value);
}

function recordLineOf(columns: readonly { name: string }[], row: unknown): string {
  const cells = columns
    .map((c) => (row && typeof row === "object" ? (row as Record<string, unknown>)[c.name] : undefined))
    .map((v) => (v === undefined || v === null ? "" : String(v)));
  while (cells.length > 0 && cells.at(-1) === "") cells.pop();
  return cells.join(", ");
}

/** "12" → 12; anything else stays text, so the schema names the field and the problem. */
function numberOrText(text: string): number | string {
  return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
}

function linesOf(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
}

export function isFieldShown(field: TSettingField, raw: Record<string, unknown>): boolean {
  return !field.onlyWhen || field.onlyWhen.values.includes(String(raw[field.onlyWhen.field] ?? ""));
}

/**
 * Submitted strings → the setting's value. Blank numbers are left out (the schema's default
 * applies, or it says the field is required); text that is not a number stays text, so the
 * schema names the field and the problem instead of us guessing a number.
 */
export function settingValueOf(key: TFormSettingKey, raw: Record<string, unknown>): Record<string, unknown> {
  const value: Record<string, unknown> = {};
  if (key === "task.limits") value.v = 1;
  for (const field of fieldsOf(key)) {
    if (!isFieldShown(field, raw)) continue;
    const text = typeof raw[field.name] === "string" ? (raw[field.name] as string).trim() : "";
    if (field.kind === "lines") {
      writePath(value, field.name, linesOf(text));
    } else if (field.kind === "number") {
      if (text !== "") writePath(value, field.name, numberOrText(text));
      else if (field.isNullable) writePath(value, field.name, null);
    } else if (field.kind === "boolean") {
      writePath(value, field.name, text === "true" ? true : text === "false" ? false : text);
    } else if (field.kind === "map") {
      // a line without "=" keeps its whole text as the value, so the schema refuses it by name
      writePath(
        value,
        field.name,
        Object.fromEntries(
          linesOf(text).map((line) =>
            line.includes("=")
              ? [line.slice(0, line.indexOf("=")).trim(), numberOrText(line.slice(line.indexOf("=") + 1).trim())]
              : [line, line],
          ),
        ),
      );
    } else if (field.kind === "records") {
      writePath(
        value,
        field.name,
        linesOf(text).map((line) => {
          const cells = line.split(",").map((cell) => cell.trim());
          const row: Record<string, unknown> = {};
          field.columns.forEach((column, i) => {
            const cell = cells[i] ?? "";
            if (cell !== "") row[column.name] = column.isNumber ? numberOrText(cell) : cell;
          });
          // more cells than columns: kept under a key the strict schema refuses by name
          if (cells.length > field.columns.length) row.extra = cells.slice(field.columns.length).join(", ");
          return row;
        }),
      );
    } else if (field.kind === "dollars") {
      if (text === "") {
        if (field.isNullable) writePath(value, field.name, null);
      } else writePath(value, field.name, /^\d+(\.\d+)?$/.test(text) ? Math.round(Number(text) * 1_000_000) : text);
    } else if (text !== "") {
      writePath(value, field.name, text);
    }
  }
  return value;
}

/**
 * The schema's issue paths → this form's fields. A map or records field is one control, so an
 * issue deeper inside it ("targets.1.host", "bySubstrate.local") is shown next to that control,
 * naming the line or key it is about.
 */
export function formFieldErrorsOf(key: TFormSettingKey, errors: Record<string, string[]>): Record<string, string[]> {
  const folded: Record<string, string[]> = {};
  for (const [path, messages] of Object.entries(errors)) {
    const field = fieldsOf(key).find((f) => (f.kind === "map" || f.kind === "records") && path.startsWith(`${f.name}.`));
    if (!field) {
      (folded[path] ??= []).push(...messages);
      continue;
    }
    const [first, ...rest] = path.slice(field.name.length + 1).split(".");
    const where =
      field.kind === "records" && /^\d+$/.test(first!)
        ? `line ${Number(first) + 1}${rest.length ? `, ${rest.join(".")}` : ""}`
        : [first, ...rest].join(".");
    const list = (folded[field.name] ??= []);
    for (const message of messages) if (list.length < 5) list.push(`${where}: ${message}`);
  }
  return folded;
}

const UNITS: [number, string][] = [
  [1024 ** 3, "GiB"],
  [1024 ** 2, "MiB"],
  [1024, "KiB"],
];

/** 67108864 → "64 MiB"; what a byte field shows beside it. */
export function humanBytes(bytes: number): string {
  for (const [size, unit] of UNITS) if (bytes >= size) return `${Number((bytes / size).toFixed(2))} ${unit}`;
  return `${bytes} bytes`;
}

/** A value in its unit, for defaults and previews. */
export function formatInUnit(value: number, unit: TUnit): string {
  if (unit === "bytes") return humanBytes(value);
  if (unit === "count") return String(value);
  return `${value} ${unit}`;
}
