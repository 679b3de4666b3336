/**
 * The title and body of a published pull request. Identifiers come from the control plane's own
 * records; the issue title and teacher name are text people typed, so they are stripped of
 * control characters and line breaks and bounded before they reach the provider.
 */
import { boundText, stripControlCharacters } from "../redact";

export type TPullRequestTextInput = {
  taskId: string;
  issueNumber: number;
  issueTitle: string;
  candidateId: string;
  headSha: string;
  baseRef: string;
  baseSha: string;
  evidenceDigest: string;
  manifestDigest: string;
  teacherName: string;
  /**
   * The task's review rounds, oldest first (issue 14): each with its head and the decision it got.
   * Teacher comments are not copied into the public body; the rounds are named by their identities.
   */
  rounds?: {
    round: number;
    candidateId: string;
    headSha: string;
    verdict: "approve" | "reject" | "request_changes" | null;
  }[];
};

const VERDICT_TEXT = { approve: "approved", reject: "rejected", request_changes: "changes requested" } as const;

function oneLine(text: string, maxChars: number): string {
  return boundText(
    stripControlCharacters(text)
      .replace(/[\r\n\t\uFFFD]+/g, " ")
      .replace(/\s+/g, " ")
      .trim(),
    maxChars,
  );
}

export function buildPullRequestText(input: TPullRequestTextInput): { title: string; body: string } {
  const title = oneLine(`${oneLine(input.issueTitle, 180) || "School-Core change"} (#${input.issueNumber})`, 240);
  const body = [
    "Opened by School-Core after a teacher approved this exact commit and its trusted verification.",
    "",
    `- Task: \`${input.taskId}\``,
    `- Issue: #${input.issueNumber}`,
    `- Candidate: \`${input.candidateId}\``,
    `- Head SHA: \`${input.headSha}\``,
    `- Base: \`${oneLine(input.baseRef, 100)}\` at \`${input.baseSha}\``,
    `- Verification evidence digest: \`${input.evidenceDigest}\``,
    `- Trusted manifest digest: \`${input.manifestDigest}\``,
    `- Approved by: ${oneLine(input.teacherName, 100).replace(/[`*_[\]<>@#]/g, "")}`,
    "",
    ...roundLines(input.rounds ?? []),
    `Refs #${input.issueNumber}`,
    "",
  ].join("\n");
  return { title, body };
}

/** "Review rounds" section: one line per round; absent for a task approved in its first round with no list given. */
function roundLines(rounds: NonNullable<TPullRequestTextInput["rounds"]>): string[] {
  if (rounds.length === 0) return [];
  const lines = rounds
    .slice(0, 20)
    .map(
      (r) =>
        `- Round ${r.round}: \`${r.candidateId}\` at \`${r.headSha}\` — ${r.verdict ? VERDICT_TEXT[r.verdict] : "no decision"}`,
    );
  return [`Review rounds (${rounds.length}):`, "", ...lines, ""];
}
