/**
 * The trusted manifest v1: the operator's checks a candidate must pass, the verifier image and
 * limits. Operator-owned policy — nothing in a repository (a package.json script, a CI file) can
 * add, remove or change a check; candidate files are data the checks run against.
 */
import { z } from "zod";
import { ZGuestImageSchema } from "./guest-image";

/** `tap`: TAP test points and plan; `node-test`: the `node --test` summary (spec or tap reporter). */
export const REPORTER_FORMATS = ["tap", "node-test"] as const;
export type TReporterFormat = (typeof REPORTER_FORMATS)[number];

export const ZTrustedCheckSchema = z
  .object({
    name: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .regex(/^[A-Za-z0-9 ._:-]+$/, "letters, digits, spaces and . _ : -"),
    /** argv run inside the verifier guest, in /workspace/candidate; never a repository-defined script name */
    command: z.array(z.string().min(1).max(2000)).min(1).max(64),
    timeoutSeconds: z.number().int().min(5).max(3600),
    required: z.boolean(),
    /**
     * Optional (added within v1; a manifest without it keeps its digest): the test reporter whose
     * summary the check prints on stdout. Declared → the counts are recorded in the evidence, and
     * zero tests run, a failing count or no summary is not a pass even with exit 0.
     */
    reporter: z.enum(REPORTER_FORMATS).optional(),
  })
  .strict();

export const ZTrustedManifestSchema = z
  .object({
    v: z.literal(1),
    checks: z
      .array(ZTrustedCheckSchema)
      .min(1)
      .max(50)
      .refine((checks) => new Set(checks.map((c) => c.name)).size === checks.length, "check names must be unique"),
    image: ZGuestImageSchema,
    limits: z
      .object({
        cpus: z.number().int().min(1).max(16),
        memoryMb: z.number().int().min(128).max(65536),
        diskGb: z.number().int().min(1).max(200),
        maxOutputBytes: z
          .number()
          .int()
          .min(1024)
          .max(1024 * 1024),
      })
      .strict(),
    /**
     * Path prefixes whose content in the verification tree comes from the BASE commit, not the
     * candidate: a student cannot weaken the tests the trusted checks run.
     */
    protectedPaths: z
      .array(
        z
          .string()
          .min(1)
          .max(500)
          .regex(/^[^/].*$/, "relative paths"),
      )
      .max(100)
      .default([]),
  })
  .strict();

export type TTrustedManifest = z.infer<typeof ZTrustedManifestSchema>;
export type TTrustedCheck = z.infer<typeof ZTrustedCheckSchema>;

/** The demo's manifest: the repository's tests, run by an operator-chosen command, on base test files. */
export const DEMO_TRUSTED_MANIFEST: TTrustedManifest = {
  v: 1,
  checks: [
    {
      name: "unit tests",
      command: ["node", "--test", "--test-reporter=spec"],
      timeoutSeconds: 120,
      required: true,
      reporter: "node-test",
    },
    {
      name: "no debugger statements",
      command: ["sh", "-c", "! grep -rn --include=*.js 'debugger' src"],
      timeoutSeconds: 30,
      required: false,
    },
  ],
  image: { type: "smolmachine", reference: "school-core/node24" },
  limits: { cpus: 1, memoryMb: 512, diskGb: 1, maxOutputBytes: 64 * 1024 },
  protectedPaths: ["test/"],
};
