/**
 * The signed-in user's profile (`/profile`): the notification events this actor may receive and
 * those chosen for email, whether email is configured at all, the signed webhooks (an operator's
 * only) and the recent deliveries this actor may see.
 */
import { can } from "../../auth/permissions";
import type { Actor } from "../../contract/actor";
import { listDeliveries, listEmailPreferences, listWebhooks } from "../../notifications/manage-notifications";
import { canReceiveNotification, TASK_NOTIFICATION_EVENTS } from "../../notifications/notification-events";
import { assertMayRead, type TPageDeps } from "../page-deps";

export async function readProfilePage(deps: TPageDeps, input: { actor: Actor }) {
  const { actor } = input;
  assertMayRead(actor, "profile.edit");
  const { db } = deps;
  const isOperator = can(actor, "notification.manage");
  const [chosen, webhooks, deliveries] = await Promise.all([
    listEmailPreferences({ db }, { actor }),
    isOperator ? listWebhooks({ db }) : Promise.resolve([]),
    listDeliveries({ db }, { actor }),
  ]);
  return {
    isOperator,
    chosen,
    webhooks,
    deliveries,
    events: TASK_NOTIFICATION_EVENTS.filter((event) => canReceiveNotification(actor, event)),
    isEmailConfigured: Boolean(deps.env.SMTP_URL),
  };
}
