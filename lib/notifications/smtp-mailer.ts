/**
 * Notification email over SMTP (nodemailer), configured by SMTP_URL. The URL may carry the SMTP
 * password, so TLS is required (smtps://, or STARTTLS on smtp://) unless the server is on this
 * host's loopback — the same rule as every other endpoint that receives a credential. Timeouts are
 * short: a stuck server fails the attempt, and the delivery is retried later; the lifecycle never
 * waits for it.
 */
import nodemailer from "nodemailer";
import { isLoopbackHostname } from "../contract/secure-endpoint";
import type { TEnv } from "../env";
import { sanitizeExcerpt } from "../redact";

export type TMailMessage = { to: string; subject: string; text: string };
export type TMailer = { sendMail(message: TMailMessage): Promise<void>; close(): void };

export const DEFAULT_SMTP_FROM = "School-Core <school-core@localhost>";

/** A mailer for SMTP_URL, or null when it is unset (email is then not configured). */
export function createSmtpMailer(env: TEnv): TMailer | null {
  if (!env.SMTP_URL) return null;
  const url = new URL(env.SMTP_URL);
  const isImplicitTls = url.protocol === "smtps:";
  const password = decodeURIComponent(url.password);
  const transport = nodemailer.createTransport({
    host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port ? Number(url.port) : isImplicitTls ? 465 : 587,
    secure: isImplicitTls,
    requireTLS: !isImplicitTls && !isLoopbackHostname(url.hostname),
    auth: url.username ? { user: decodeURIComponent(url.username), pass: password } : undefined,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  });
  const from = env.SMTP_FROM ?? DEFAULT_SMTP_FROM;
  return {
    async sendMail(message) {
      try {
        await transport.sendMail({ from, to: message.to, subject: message.subject, text: message.text });
      } catch (error) {
        // A server's answer may echo what we sent; never the password.
        throw new Error(
          sanitizeExcerpt(
            `SMTP: ${error instanceof Error ? error.message : String(error)}`,
            500,
            password ? [password] : [],
          ),
        );
      }
    },
    close: () => transport.close(),
  };
}
