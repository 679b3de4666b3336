/**
 * The guest filesystem layout: every path the control plane, the local substrate and the guest
 * programs agree on inside a guest machine. It is a contract like the task request and the guest
 * result: the worker uploads to these paths and downloads from them, the guest programs read and
 * write them, and the substrate mounts the relay socket at one of them.
 *
 * The guest programs (guest/*.mjs) run standalone inside the guest and cannot import TypeScript,
 * so they repeat these values; guest-layout.test.ts reads their source and fails when one
 * diverges (or when a guest program hard-codes a guest path this module does not name).
 */

// ---- the student guest ----------------------------------------------------------------------

/** Where the worker uploads the task's inputs: task.json, repository.tar and the guest programs. */
export const GUEST_INPUT_DIR = "/tmp/school-core-input";
/** The task request (TaskRequest v1) the guest programs read. */
export const GUEST_TASK_FILE = `${GUEST_INPUT_DIR}/task.json`;
/** The base tree of the target repository, as a tar archive. */
export const GUEST_REPOSITORY_ARCHIVE = `${GUEST_INPUT_DIR}/repository.tar`;
/** The operator's guest runner, started in the background by the worker. */
export const GUEST_RUNNER_PROGRAM = `${GUEST_INPUT_DIR}/runner.mjs`;
/** The text-only reference student agent (the relay's `complete`, whole-file answers), a second example. */
export const GUEST_STUDENT_AGENT_PROGRAM = `${GUEST_INPUT_DIR}/student-agent.mjs`;
/**
 * The tool-using reference agent on the official `openai` SDK (issue 25); the default `guest.agent`
 * command runs it with node. It imports "openai" from GUEST_SDK_MODULES_DIR, found by Node's
 * resolution from any directory.
 */
export const GUEST_OPENAI_AGENT_PROGRAM = `${GUEST_INPUT_DIR}/openai-agent.mjs`;
export const GUEST_ANTHROPIC_AGENT_PROGRAM = `${GUEST_INPUT_DIR}/anthropic-agent.mjs`;
/** Where the default image binds the agents' SDK packages read-only (`/node_modules/openai`). */
export const GUEST_SDK_MODULES_DIR = "/node_modules";

/**
 * An agent profile's code (issue 26): the archive the worker uploads (tar, or gzip'd tar — GNU tar
 * reads either), and the directory the runner extracts it into before the agent starts; the agent
 * finds it as SCHOOL_CORE_AGENT_DIR. Outside the repository, so it never becomes part of a candidate.
 */
export const GUEST_AGENT_CODE_ARCHIVE = `${GUEST_INPUT_DIR}/agent-code.tar`;
export const GUEST_AGENT_DIR = "/tmp/school-core-agent";
/**
 * The dependency bundle of an agent profile's code (issue 26), built by the trusted builder from
 * the lockfile in that code: the runner extracts it into GUEST_AGENT_DIR (its one top-level
 * folder, node_modules or site-packages, replacing any the code shipped) before the agent starts.
 */
export const GUEST_AGENT_DEPENDENCIES_ARCHIVE = `${GUEST_INPUT_DIR}/agent-dependencies.tar.gz`;

/** Where the runner and the agent write what the worker collects. */
export const GUEST_OUTPUT_DIR = "/tmp/school-core-output";
/** GuestResult v1, written atomically by the runner. */
export const GUEST_RESULT_FILE = `${GUEST_OUTPUT_DIR}/result.json`;
/** Written by the runner after result.json; the worker polls for it. */
export const GUEST_DONE_FILE = `${GUEST_OUTPUT_DIR}/done.json`;
/** A counter the runner rewrites while it lives (liveness for the worker). */
export const GUEST_HEARTBEAT_FILE = `${GUEST_OUTPUT_DIR}/heartbeat`;
/** The student agent's output, read (bounded, untrusted) by the runner. */
export const GUEST_AGENT_LOG_FILE = `${GUEST_OUTPUT_DIR}/agent.log`;
/** The file name of the student's bounded report, in GUEST_OUTPUT_DIR. */
export const GUEST_STUDENT_REPORT_NAME = "student-report.json";
export const GUEST_STUDENT_REPORT_FILE = `${GUEST_OUTPUT_DIR}/${GUEST_STUDENT_REPORT_NAME}`;

/** The exported candidate tree (no .git); the only archive path GuestResult v1 may name. */
export const GUEST_CANDIDATE_ARCHIVE = "/tmp/school-core-candidate.tar";
/** The runner's idempotent-start lock (a directory): a second launch exits at once. */
export const GUEST_RUNNER_LOCK = "/tmp/school-core-runner.lock";
/** The runner's scratch list of tracked files, fed to tar when exporting the candidate. */
export const GUEST_RUNNER_FILE_LIST = "/tmp/school-core-files";
/** The working tree the agent edits. */
export const GUEST_REPO_DIR = "/workspace/repo";

// ---- the relay, seen from the guest ---------------------------------------------------------

/** The directory the substrate mounts (read-only) holding the relay socket (http channel). */
export const GUEST_RELAY_SOCKET_DIR = "/run/school-core";
export const GUEST_RELAY_SOCKET_NAME = "relay.sock";
/** HTTP/1.1 over this unix socket reaches the task's relay endpoint. */
export const GUEST_RELAY_SOCKET = `${GUEST_RELAY_SOCKET_DIR}/${GUEST_RELAY_SOCKET_NAME}`;
/** The mailbox channel's root (network blocked): requests in outbox/, answers in inbox/. */
export const GUEST_MAILBOX_ROOT = "/tmp/relay";
export const GUEST_MAILBOX_OUTBOX_DIR = `${GUEST_MAILBOX_ROOT}/outbox`;
export const GUEST_MAILBOX_INBOX_DIR = `${GUEST_MAILBOX_ROOT}/inbox`;

// ---- the model endpoint, inside the student guest (issue 25) --------------------------------

/**
 * The loopback port where guest/model-endpoint.mjs speaks the OpenAI and Anthropic HTTP formats and
 * forwards each call to the relay's `chat` operation: the agent's SDKs get
 * `OPENAI_BASE_URL=http://127.0.0.1:7800/v1` and `ANTHROPIC_BASE_URL=http://127.0.0.1:7800`.
 */
export const GUEST_MODEL_ENDPOINT_PORT = 7800;
/** The endpoint's own failures (bounded), for the runner's diagnostics; untrusted like agent.log. */
export const GUEST_MODEL_ENDPOINT_LOG_FILE = `${GUEST_OUTPUT_DIR}/model-endpoint.log`;

// ---- the probe guest (qualification probes) ---------------------------------------------------

/** Where the worker uploads the probe program and its input. */
export const GUEST_PROBE_DIR = "/tmp/school-core-probe";
export const GUEST_PROBE_PROGRAM = `${GUEST_PROBE_DIR}/probe.mjs`;
/** The probe's input; also the probe program's default when no argument names it. */
export const GUEST_PROBE_INPUT_FILE = `${GUEST_PROBE_DIR}/input.json`;

// ---- the verifier guest ---------------------------------------------------------------------

/** Where the worker uploads the candidate tree for the trusted checks. */
export const VERIFIER_CANDIDATE_ARCHIVE = "/tmp/school-core-verify/candidate.tar";
/** The directory the trusted checks run in. */
export const VERIFIER_WORKDIR = "/workspace/candidate";

// ---- dependencies (issue 18) ----------------------------------------------------------------

/**
 * The repository's dependency bundle (a gzip'd tar whose entries sit under one top-level folder,
 * e.g. `node_modules/`), uploaded with the student's inputs and into the verifier guest.
 */
export const GUEST_DEPENDENCIES_ARCHIVE = `${GUEST_INPUT_DIR}/dependencies.tar.gz`;
/** What the runner needs to use the bundle: where it is extracted and the variables it sets. */
export const GUEST_DEPENDENCIES_FILE = `${GUEST_INPUT_DIR}/dependencies.json`;
/**
 * Where a bundle is extracted: the parent of the student's repository and of the verifier's work
 * directory, so Node's resolution (and npm's `.bin` lookup) finds `/workspace/node_modules`
 * without the bundle ever becoming part of the candidate tree.
 */
export const GUEST_DEPENDENCIES_DIR = "/workspace";
/** The verifier's copy of the bundle, re-uploaded and re-extracted before every trusted check. */
export const VERIFIER_DEPENDENCIES_ARCHIVE = "/tmp/school-core-verify/dependencies.tar.gz";

// ---- the builder guest (trusted dependency setup, issue 18) ---------------------------------

/** Where the worker uploads the builder program, its configuration and the lockfile inputs. */
export const BUILDER_DIR = "/tmp/school-core-build";
export const BUILDER_PROGRAM = `${BUILDER_DIR}/dependency-builder.mjs`;
export const BUILDER_CONFIG_FILE = `${BUILDER_DIR}/build.json`;
/** The recipe's input files (the lockfile and its manifest) read from the base commit, as tar. */
export const BUILDER_INPUTS_ARCHIVE = `${BUILDER_DIR}/inputs.tar`;
/** The bundle the builder produces (gzip'd tar of the recipe's output folder). */
export const BUILDER_BUNDLE_ARCHIVE = `${BUILDER_DIR}/bundle.tar.gz`;
export const BUILDER_RESULT_FILE = `${BUILDER_DIR}/result.json`;
/** The directory the recipe runs in. */
export const BUILDER_WORKDIR = "/workspace/build";
/**
 * The loopback port inside the builder guest where the builder program listens and forwards each
 * connection to the relay socket (GUEST_RELAY_SOCKET), i.e. to the registry broker: the package
 * manager's registry is `http://127.0.0.1:7878/…` and nothing else is reachable.
 */
export const BUILDER_REGISTRY_PORT = 7878;
