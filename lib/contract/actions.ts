/**
 * The closed set of things a role may be allowed to do. It sits in lib/contract (below every
 * domain) so a domain can name the permission its own objects need — a setting's definition says
 * which action may write it — without importing lib/auth, which reads settings itself. Who holds
 * which action is lib/auth/permissions.ts's one table.
 */
export const ACTIONS = [
  "review.view",
  "review.decide",
  "operator.view",
  "task.create",
  "task.cancel",
  "task.reverify",
  "task.retry",
  "audit.view",
  "repository.manage",
  "machine.manage",
  "limits.edit",
  "spend.edit",
  "dispatch.toggle",
  "manifest.edit",
  "probe.run",
  "relay.manage",
  "candidate.reprove",
  "publish.manage",
  "user.manage",
  /** every signed-in user's own profile: their email notification choices */
  "profile.edit",
  /** operators' webhooks and the whole notification delivery log */
  "notification.manage",
  "agent.manage",
] as const;
export type TAction = (typeof ACTIONS)[number];
