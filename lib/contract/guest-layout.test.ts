/**
 * Parity between lib/contract/guest-layout.ts and the guest programs, which run standalone in the
 * guest and repeat the layout as constants of their own. Reads their source (never runs it: the
 * runner has side effects at import) and fails when a constant diverges, when a mapped constant
 * disappears, or when a program hard-codes a guest path outside a mapped constant.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../project-root";
import * as layout from "./guest-layout";

const GUEST_DIR = path.join(PROJECT_ROOT, "guest");

/** Per program: its constant name → the layout value it must equal. */
const PARITY: Record<string, Record<string, string>> = {
  "runner.mjs": {
    INPUT: layout.GUEST_INPUT_DIR,
    TASK_FILE: layout.GUEST_TASK_FILE,
    REPOSITORY_ARCHIVE: layout.GUEST_REPOSITORY_ARCHIVE,
    OUTPUT: layout.GUEST_OUTPUT_DIR,
    RESULT_FILE: layout.GUEST_RESULT_FILE,
    DONE_FILE: layout.GUEST_DONE_FILE,
    HEARTBEAT_FILE: layout.GUEST_HEARTBEAT_FILE,
    AGENT_LOG_FILE: layout.GUEST_AGENT_LOG_FILE,
    STUDENT_REPORT_FILE: layout.GUEST_STUDENT_REPORT_FILE,
    REPO: layout.GUEST_REPO_DIR,
    ARCHIVE: layout.GUEST_CANDIDATE_ARCHIVE,
    LOCK: layout.GUEST_RUNNER_LOCK,
    FILE_LIST: layout.GUEST_RUNNER_FILE_LIST,
    DEPENDENCIES_ARCHIVE: layout.GUEST_DEPENDENCIES_ARCHIVE,
    DEPENDENCIES_FILE: layout.GUEST_DEPENDENCIES_FILE,
    DEPENDENCIES_DIR: layout.GUEST_DEPENDENCIES_DIR,
    MODEL_ENDPOINT_LOG_FILE: layout.GUEST_MODEL_ENDPOINT_LOG_FILE,
    AGENT_CODE_ARCHIVE: layout.GUEST_AGENT_CODE_ARCHIVE,
    AGENT_DIR: layout.GUEST_AGENT_DIR,
    AGENT_DEPENDENCIES_ARCHIVE: layout.GUEST_AGENT_DEPENDENCIES_ARCHIVE,
  },
  "openai-agent.mjs": {},
  "anthropic-agent.mjs": {},
  // The tools: no guest paths of their own (the repository is passed in).
  "agent-tools.mjs": {},
  "agent-run.mjs": {
    TASK_FILE: layout.GUEST_TASK_FILE,
    REPO_DIR: layout.GUEST_REPO_DIR,
    OUTPUT_DIR: layout.GUEST_OUTPUT_DIR,
    REPORT_FILE_NAME: layout.GUEST_STUDENT_REPORT_NAME,
  },
  "student-agent.mjs": {
    TASK_FILE: layout.GUEST_TASK_FILE,
    REPO_DIR: layout.GUEST_REPO_DIR,
    OUTPUT_DIR: layout.GUEST_OUTPUT_DIR,
  },
  "relay-client.mjs": {
    TASK_FILE: layout.GUEST_TASK_FILE,
    RELAY_SOCKET_PATH: layout.GUEST_RELAY_SOCKET,
    MAILBOX_ROOT: layout.GUEST_MAILBOX_ROOT,
  },
  // The client's protocol and channels: the socket and mailbox root come from the client.
  "relay-protocol.mjs": {},
  "relay-channel-mailbox.mjs": {},
  "relay-channel-http.mjs": {},
  "model-endpoint.mjs": {
    LOG_FILE: layout.GUEST_MODEL_ENDPOINT_LOG_FILE,
  },
  // The endpoint's formats and plumbing: no guest paths of their own.
  "model-endpoint-common.mjs": {},
  "model-endpoint-openai.mjs": {},
  "model-endpoint-anthropic.mjs": {},
  "model-endpoint-http.mjs": {},
  "probe.mjs": {
    INPUT: layout.GUEST_PROBE_INPUT_FILE,
  },
  // The probe's helpers and its look at the model endpoint: paths come in its input.
  "probe-io.mjs": {},
  "probe-model-endpoint.mjs": {},
  // No guest paths of its own: it runs what its callers give it, where they say.
  "spawn-with-timeout.mjs": {},
  "dependency-builder.mjs": {
    BUILD_DIR: layout.BUILDER_DIR,
    CONFIG_FILE: layout.BUILDER_CONFIG_FILE,
    INPUTS_ARCHIVE: layout.BUILDER_INPUTS_ARCHIVE,
    BUNDLE_ARCHIVE: layout.BUILDER_BUNDLE_ARCHIVE,
    RESULT_FILE: layout.BUILDER_RESULT_FILE,
    WORKDIR: layout.BUILDER_WORKDIR,
    RELAY_SOCKET_PATH: layout.GUEST_RELAY_SOCKET,
  },
};

/** `const NAME = "…";` or a template over earlier constants; a command-line default (`process.argv[n] ?? "…"`) counts too. */
const DECLARATION =
  /^(?:export\s+)?const\s+([A-Z][A-Z0-9_]*)\s*=\s*(?:process\.argv\[\d+\]\s*\?\?\s*)?("[^"\\]*"|`[^`\\]*`);/gm;
/** A string or template literal that starts with a guest path root. */
const GUEST_PATH_LITERAL = /["'`](\/(?:tmp|run|workspace)\/[^"'`]*)["'`]/g;

/** The program's top-level string constants, templates resolved against the constants above them. */
function readConstants(source: string): Map<string, { value: string; line: number }> {
  const constants = new Map<string, { value: string; line: number }>();
  for (const match of source.matchAll(DECLARATION)) {
    const [, name, literal] = match as unknown as [string, string, string];
    const value = literal.slice(1, -1).replace(/\$\{([A-Z][A-Z0-9_]*)\}/g, (_whole, ref: string) => {
      const known = constants.get(ref);
      if (!known) throw new Error(`${name} refers to ${ref}, which is not a string constant declared above it`);
      return known.value;
    });
    constants.set(name, { value, line: source.slice(0, match.index).split("\n").length });
  }
  return constants;
}

describe("the guest programs agree with lib/contract/guest-layout.ts", () => {
  it("covers every guest program", () => {
    const programs = fs.readdirSync(GUEST_DIR).filter((name) => name.endsWith(".mjs"));
    expect(programs.sort()).toEqual(Object.keys(PARITY).sort());
  });

  for (const [program, expected] of Object.entries(PARITY)) {
    describe(program, () => {
      const source = fs.readFileSync(path.join(GUEST_DIR, program), "utf8");
      const constants = readConstants(source);

      it.each(Object.entries(expected))("%s equals the layout", (name, value) => {
        expect(constants.get(name)?.value, `${program} must declare ${name}`).toBe(value);
      });

      it("hard-codes no guest path outside a mapped constant", () => {
        const mappedLines = new Set([...constants].filter(([name]) => name in expected).map(([, c]) => c.line));
        const strays = source.split("\n").flatMap((text, index) => {
          if (mappedLines.has(index + 1) || /^\s*(\/\/|\*|\/\*)/.test(text)) return [];
          return [...text.matchAll(GUEST_PATH_LITERAL)].map((m) => `line ${index + 1}: ${m[1]}`);
        });
        expect(strays, "declare the path as a constant and map it in guest-layout.test.ts").toEqual([]);
      });
    });
  }

  it("the builder program listens on the layout's registry port", () => {
    const source = fs.readFileSync(path.join(GUEST_DIR, "dependency-builder.mjs"), "utf8");
    expect(source).toContain(`const REGISTRY_PORT = ${layout.BUILDER_REGISTRY_PORT};`);
  });

  it("the model endpoint listens on the layout's port", () => {
    const source = fs.readFileSync(path.join(GUEST_DIR, "model-endpoint.mjs"), "utf8");
    expect(source).toContain(`export const MODEL_ENDPOINT_PORT = ${layout.GUEST_MODEL_ENDPOINT_PORT};`);
  });

  it("derives the composite paths from their parts", () => {
    expect(layout.GUEST_STUDENT_REPORT_FILE).toBe(
      path.posix.join(layout.GUEST_OUTPUT_DIR, layout.GUEST_STUDENT_REPORT_NAME),
    );
    expect(layout.GUEST_RELAY_SOCKET).toBe(
      path.posix.join(layout.GUEST_RELAY_SOCKET_DIR, layout.GUEST_RELAY_SOCKET_NAME),
    );
    expect(layout.GUEST_MAILBOX_OUTBOX_DIR).toBe(path.posix.join(layout.GUEST_MAILBOX_ROOT, "outbox"));
    expect(layout.GUEST_MAILBOX_INBOX_DIR).toBe(path.posix.join(layout.GUEST_MAILBOX_ROOT, "inbox"));
  });
});
