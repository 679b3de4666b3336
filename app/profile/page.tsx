import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { ActionForm } from "@/components/action-form";
import { DataTable } from "@/components/data-table";
import { EmptyState } from "@/components/empty-state";
import { Field, FieldError } from "@/components/form-field";
import { getPageDeps } from "@/app/_server/page-data";
import { NOTIFICATION_EVENT_INFO, TASK_NOTIFICATION_EVENTS } from "@/lib/notifications/notification-events";
import { readProfilePage } from "@/lib/pages/profile/profile-page";
import { formatDateTime } from "@/lib/format/format";
import { addWebhookAction, removeWebhookAction, saveEmailPreferencesAction, testWebhookAction } from "./actions";

const CONTROL = "mt-1 w-full rounded border border-slate-300 px-2 py-1 text-sm";

function eventLabel(event: string): string {
  return event in NOTIFICATION_EVENT_INFO
    ? NOTIFICATION_EVENT_INFO[event as keyof typeof NOTIFICATION_EVENT_INFO].title
    : "Test";
}

export default async function ProfilePage() {
  const actor = await requirePagePermission("profile.edit", "/profile");
  const { isOperator, chosen, webhooks, deliveries, events, isEmailConfigured } = await readProfilePage(
    await getPageDeps(),
    { actor },
  );
  return (
    <section className="space-y-6">
      <h1>Profile</h1>
      <p className="text-sm text-slate-600">
        Signed in as <span className="font-medium">{actor.email}</span> ({actor.roles.join(", ") || "no role"}).
      </p>

      <div className="space-y-2 rounded border border-slate-200 bg-white p-4">
        <h2>Email me when</h2>
        {!isEmailConfigured && (
          <p className="text-sm text-amber-800" data-testid="email-not-configured">
            Email is not configured on this server (SMTP_URL is unset): your choices are kept, and each email waits on
            the delivery log until it is.
          </p>
        )}
        <ActionForm
          action={saveEmailPreferencesAction}
          submitLabel="Save"
          testId="email-preferences-form"
          className="space-y-2"
        >
          <fieldset className="space-y-1 text-sm">
            <legend className="sr-only">Events</legend>
            {events.map((event) => (
              <label key={event} className="block">
                <input type="checkbox" name="events" value={event} defaultChecked={chosen.includes(event)} />{" "}
                {NOTIFICATION_EVENT_INFO[event].label}
              </label>
            ))}
            <FieldError name="events" />
          </fieldset>
        </ActionForm>
      </div>

      {isOperator && (
        <div className="space-y-3 rounded border border-slate-200 bg-white p-4">
          <h2>Webhooks</h2>
          <p className="text-sm text-slate-600">
            Each event is POSTed as JSON <code>{"{v, event, taskId, url, occurredAt}"}</code> with{" "}
            <code>X-School-Core-Signature: sha256=HMAC(secret, timestamp + &quot;.&quot; + body)</code> and the{" "}
            <code>X-School-Core-Timestamp</code> it covers. https only (plain http to loopback). Failed deliveries are
            retried after 10 s, 30 s, 2 min, 10 min and 1 h.
          </p>
          <ActionForm
            action={addWebhookAction}
            submitLabel="Add webhook"
            testId="add-webhook-form"
            resultTestId="add-webhook-result"
            className="grid grid-cols-1 items-start gap-3 sm:grid-cols-2"
          >
            <Field name="url" label="URL">
              <input type="url" required className={CONTROL} placeholder="https://hooks.example.org/school-core" />
            </Field>
            <fieldset className="text-sm">
              <legend>Events</legend>
              {TASK_NOTIFICATION_EVENTS.map((event) => (
                <label key={event} className="mr-3 inline-block">
                  <input type="checkbox" name="events" value={event} defaultChecked />{" "}
                  {NOTIFICATION_EVENT_INFO[event].title}
                </label>
              ))}
              <FieldError name="events" />
            </fieldset>
          </ActionForm>
          {webhooks.length === 0 ? (
            <EmptyState title="No webhooks">Add one to send task events to another system.</EmptyState>
          ) : (
            <ul className="space-y-2" data-testid="webhook-list">
              {webhooks.map((hook) => (
                <li
                  key={hook.id}
                  className="flex flex-wrap items-center gap-3 rounded border border-slate-200 p-2 text-sm"
                  data-testid="webhook"
                >
                  <code className="break-all">{hook.url}</code>
                  <span className="text-slate-600">{hook.events.map(eventLabel).join(", ")}</span>
                  <ActionForm
                    action={testWebhookAction}
                    submitLabel="Send test"
                    size="xs"
                    className="flex items-center gap-2"
                  >
                    <input type="hidden" name="webhookId" value={hook.id} />
                  </ActionForm>
                  <ActionForm
                    action={removeWebhookAction}
                    submitLabel="Remove"
                    tone="danger"
                    size="xs"
                    className="flex items-center gap-2"
                  >
                    <input type="hidden" name="webhookId" value={hook.id} />
                  </ActionForm>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}

      <div className="space-y-2">
        <h2>{isOperator ? "Delivery log" : "Your recent notifications"}</h2>
        {deliveries.length === 0 ? (
          <EmptyState title="Nothing sent yet">Notifications appear here when an event you chose happens.</EmptyState>
        ) : (
          <DataTable
            testId="delivery-log"
            headers={[
              "Time",
              "Event",
              "Task",
              "Channel",
              "Recipient",
              "Status",
              "Attempts",
              "Next attempt",
              "Last error",
            ]}
          >
            {deliveries.map((d) => (
              <tr
                key={d.id}
                className="border-t border-slate-200 align-top"
                data-testid="delivery"
                data-status={d.status}
              >
                <td className="whitespace-nowrap p-2">{formatDateTime(d.createdAt, { precision: "second" })}</td>
                <td className="p-2">{eventLabel(d.event)}</td>
                <td className="p-2">
                  {d.taskId && isOperator ? (
                    <Link href={`/operator/tasks/${d.taskId}`}>task{d.round ? `, round ${d.round}` : ""}</Link>
                  ) : (
                    "—"
                  )}
                </td>
                <td className="p-2">{d.channel}</td>
                <td className="max-w-xs break-all p-2">{d.recipient}</td>
                <td
                  className={`p-2 font-medium ${d.status === "failed" ? "text-red-800" : d.status === "sent" ? "text-green-800" : "text-slate-700"}`}
                >
                  {d.status}
                </td>
                <td className="p-2">{d.attempts}</td>
                <td className="whitespace-nowrap p-2">
                  {d.status === "pending" ? formatDateTime(d.nextAttemptAt, { precision: "second" }) : "—"}
                </td>
                <td className="max-w-md whitespace-pre-wrap break-words p-2 text-red-800">{d.lastError ?? ""}</td>
              </tr>
            ))}
          </DataTable>
        )}
      </div>
    </section>
  );
}
