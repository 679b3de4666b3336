import { requirePagePermission } from "@/app/_server/guard";
import { ActionForm } from "@/components/action-form";
import { Field, FieldError } from "@/components/form-field";
import { getPageDeps } from "@/app/_server/page-data";
import { readUsersPage } from "@/lib/pages/operator/users-page";
import { SettingPanels } from "../_settings/setting-panel";
import { addUserAction, resetPasswordAction, updateUserAction } from "./actions";

const CONTROL = "mt-1 w-full rounded border border-slate-300 px-2 py-1 text-sm";
const ROLES = ["teacher", "operator"] as const;

export default async function UsersPage() {
  const actor = await requirePagePermission("user.manage", "/operator/users");
  const { users, settingPanels } = await readUsersPage(await getPageDeps(), { actor });
  return (
    <section className="space-y-6">
      <h1>Users</h1>
      <div className="space-y-2 rounded border border-slate-200 bg-white p-4">
        <h2>Add a user</h2>
        <p className="text-sm text-slate-600">
          A password is generated and shown once, here, after you add the user. Only its hash is kept.
        </p>
        <ActionForm
          action={addUserAction}
          submitLabel="Add user"
          testId="add-user-form"
          resultTestId="add-user-result"
          className="grid grid-cols-1 items-start gap-3 sm:grid-cols-3"
        >
          <Field name="email" label="Email">
            <input type="email" required className={CONTROL} />
          </Field>
          <Field name="name" label="Name (optional)">
            <input className={CONTROL} />
          </Field>
          <fieldset className="text-sm">
            <legend>Roles</legend>
            {ROLES.map((role) => (
              <label key={role} className="mr-3">
                <input type="checkbox" name="roles" value={role} defaultChecked={role === "teacher"} /> {role}
              </label>
            ))}
            <FieldError name="roles" />
          </fieldset>
        </ActionForm>
      </div>
      <ul className="space-y-3" data-testid="user-list">
        {users.map((user) => (
          <li
            key={user.id}
            className="space-y-2 rounded border border-slate-200 bg-white p-3 text-sm"
            data-testid="user"
            data-email={user.email}
          >
            <p>
              <span className="font-medium">{user.email}</span> <span className="text-slate-600">({user.name})</span>
              {user.id === actor.userId && <span className="text-slate-500"> — you</span>}
              {user.isDisabled && <span className="font-medium text-red-800"> — disabled</span>}
            </p>
            <ActionForm
              action={updateUserAction}
              submitLabel="Save"
              size="xs"
              className="flex flex-wrap items-center gap-3"
            >
              <input type="hidden" name="userId" value={user.id} />
              {ROLES.map((role) => (
                <label key={role}>
                  <input type="checkbox" name="roles" value={role} defaultChecked={user.roles.includes(role)} /> {role}
                </label>
              ))}
              <label>
                <input type="checkbox" name="isDisabled" defaultChecked={user.isDisabled} /> disabled
              </label>
              <FieldError name="roles" />
            </ActionForm>
            <ActionForm
              action={resetPasswordAction}
              submitLabel="Reset password"
              tone="warning"
              size="xs"
              className="flex items-center gap-2"
            >
              <input type="hidden" name="userId" value={user.id} />
            </ActionForm>
          </li>
        ))}
      </ul>
      <SettingPanels panels={settingPanels} />
    </section>
  );
}
