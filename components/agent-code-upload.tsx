"use client";
/**
 * An agent's code on the operator's add and edit forms (issue 26), a part of the enclosing
 * ActionForm. Picking a file sends it at once to PUT /api/operator/agent-code — a route, not the
 * server action, so the code may be as large as the CLI's (16 MiB) while server actions keep
 * Next's 1 MB limit — which checks and stores it and answers its digest. The form then submits
 * only that digest (a hidden field, `codeDigest`); the server action re-checks it names stored
 * agent code and never sees the bytes. The file control has no name, so its bytes are never part
 * of the form's own submission.
 *
 * Until the archive is stored the form does not submit: the file control is invalid (the
 * browser's own constraint validation) while it uploads and after a refusal, so a profile is never
 * saved without the code the operator picked. After a successful save the form resets, and so
 * does this part.
 */
import { useEffect, useRef, useState } from "react";
import {
  AGENT_CODE_MAX_ARCHIVE_BYTES,
  AGENT_CODE_UPLOAD_PATH,
  ZAgentCodeUploadAnswerSchema,
  type TAgentCodeUploadAnswer,
} from "@/lib/contract/agent-code-upload";
import { formatBytes } from "@/lib/format/format";
import { useActionForm } from "./action-form";
import { Field } from "./form-field";

type TUpload =
  | { kind: "idle" }
  | { kind: "uploading"; sent: number; total: number }
  | { kind: "checking" }
  | { kind: "stored"; answer: TAgentCodeUploadAnswer }
  | { kind: "refused"; message: string };

/** The route's `{ error: { code, message } }`, bounded; or the status line. */
function refusalOf(xhr: XMLHttpRequest): string {
  try {
    const body = JSON.parse(xhr.responseText) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.message === "string") return body.error.message.slice(0, 600);
  } catch {
    // not JSON: a proxy's page, a dropped connection
  }
  return xhr.status === 0 ? "The upload did not reach the server." : `The upload failed (HTTP ${xhr.status}).`;
}

function startUpload(file: File, onState: (state: TUpload) => void): () => void {
  const xhr = new XMLHttpRequest();
  // XMLHttpRequest, not fetch: only it reports upload progress in every browser.
  xhr.upload.onprogress = (event) =>
    onState({ kind: "uploading", sent: event.loaded, total: event.total || file.size });
  xhr.upload.onload = () => onState({ kind: "checking" });
  xhr.onerror = () => onState({ kind: "refused", message: "The upload did not reach the server." });
  xhr.onload = () => {
    if (xhr.status !== 200) return onState({ kind: "refused", message: refusalOf(xhr) });
    try {
      onState({ kind: "stored", answer: ZAgentCodeUploadAnswerSchema.parse(JSON.parse(xhr.responseText)) });
    } catch {
      onState({ kind: "refused", message: "The server's answer could not be read." });
    }
  };
  xhr.open("PUT", AGENT_CODE_UPLOAD_PATH);
  xhr.setRequestHeader("Content-Type", "application/octet-stream");
  xhr.send(file);
  onState({ kind: "uploading", sent: 0, total: file.size });
  return () => xhr.abort();
}

function describe(state: TUpload): string | null {
  switch (state.kind) {
    case "idle":
      return null;
    case "uploading":
      return `Uploading… ${state.total > 0 ? Math.floor((100 * state.sent) / state.total) : 0}%`;
    case "checking":
      return "Checking the archive…";
    case "stored": {
      const { codeDigest, bytes, dependencies } = state.answer;
      const lockfile = dependencies ? `; its lockfile selects ${dependencies.recipe}` : "";
      return `Checked and stored: sha256 ${codeDigest.slice(0, 12)}… (${formatBytes(bytes)})${lockfile}.`;
    }
    case "refused":
      return `Refused: ${state.message}`;
  }
}

type TControlProps = { id?: string; name?: string; "aria-invalid"?: boolean; "aria-describedby"?: string };

/** The file control and its status; `<Field>` gives it its id, aria attributes and the hidden field's name. */
function AgentCodeControl({ name, ...controlProps }: TControlProps) {
  const { state: formState } = useActionForm();
  const [upload, setUpload] = useState<TUpload>({ kind: "idle" });
  const [seenFormState, setSeenFormState] = useState(formState);
  const inputRef = useRef<HTMLInputElement>(null);
  const abortRef = useRef<(() => void) | null>(null);

  // The form resets after a successful save (ActionForm): the stored digest goes with it.
  if (formState !== seenFormState) {
    setSeenFormState(formState);
    if (formState?.ok) setUpload({ kind: "idle" });
  }
  useEffect(() => () => abortRef.current?.(), []);
  useEffect(() => {
    const message =
      upload.kind === "uploading" || upload.kind === "checking"
        ? "The archive is still being checked."
        : upload.kind === "refused"
          ? "The archive was refused: choose another file or clear this one."
          : "";
    inputRef.current?.setCustomValidity(message);
  }, [upload]);

  function choose(file: File | undefined) {
    abortRef.current?.();
    abortRef.current = null;
    if (!file) return setUpload({ kind: "idle" });
    // The route refuses it too; this only answers before sending 16 MiB for nothing.
    if (file.size > AGENT_CODE_MAX_ARCHIVE_BYTES)
      return setUpload({
        kind: "refused",
        message: `${formatBytes(file.size)} is larger than ${formatBytes(AGENT_CODE_MAX_ARCHIVE_BYTES)}, the limit of an agent's code.`,
      });
    abortRef.current = startUpload(file, setUpload);
  }

  function clear() {
    if (inputRef.current) inputRef.current.value = "";
    choose(undefined);
  }

  const status = describe(upload);
  return (
    <>
      <input
        ref={inputRef}
        type="file"
        accept=".tar,.tgz,.tar.gz,application/x-tar,application/gzip"
        onChange={(event) => choose(event.target.files?.[0])}
        className="mt-1 w-full rounded border border-slate-300 px-2 py-1 text-sm"
        data-testid="agent-code-file"
        {...controlProps}
      />
      <input type="hidden" name={name} value={upload.kind === "stored" ? upload.answer.codeDigest : ""} />
      {status && (
        <p
          role="status"
          data-testid="agent-code-status"
          data-state={upload.kind}
          className={`mt-1 text-xs ${upload.kind === "refused" ? "text-red-700" : upload.kind === "stored" ? "text-green-800" : "text-slate-700"}`}
        >
          {status}{" "}
          <button type="button" onClick={clear} className="underline">
            {upload.kind === "stored" ? "Remove" : "Clear"}
          </button>
        </p>
      )}
    </>
  );
}

type Props = { label: React.ReactNode; hint?: React.ReactNode; className?: string };

/** The code field of the agent profile forms: label, hint, the upload and its errors (field `codeDigest`). */
export function AgentCodeUpload({ label, hint, className }: Props) {
  return (
    <Field name="codeDigest" label={label} hint={hint} className={className}>
      <AgentCodeControl />
    </Field>
  );
}
