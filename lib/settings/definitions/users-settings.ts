/** The settings on Operator → Users: sign-in with the school's identity provider. */
import { defineSetting } from "../define-setting";
import { DEFAULT_OIDC_SETTING, ZOidcSettingSchema } from "../setting-schemas";

export const USERS_SETTINGS = {
  /** roles from the OpenID Connect provider's groups, and who may still sign in with a password */
  "auth.oidc": defineSetting({
    schema: ZOidcSettingSchema,
    default: DEFAULT_OIDC_SETTING,
    label: "Sign-in with the school's identity provider",
    permission: "user.manage",
    page: "/operator/users",
    editor: {
      description:
        "Used when the server is configured with OIDC_ISSUER (README: “Sign-in with your identity provider”). Roles of people who sign in there come from these groups at every sign-in; a change is audited.",
      form: {
        fields: [
          {
            kind: "text",
            name: "groupsClaim",
            label: "Groups claim",
            placeholder: "groups",
            hint: "The ID token claim that lists the person's groups (Keycloak: the “groups” mapper, added to the ID token).",
          },
          {
            kind: "lines",
            name: "teacherGroups",
            label: "Teacher groups",
            hint: "One group per line, exactly as the provider writes it (Keycloak with full paths: “/teachers”). Re-read at every sign-in.",
          },
          { kind: "lines", name: "operatorGroups", label: "Operator groups", hint: "One group per line." },
          {
            kind: "boolean",
            name: "refuseWithoutGroup",
            label: "A person in none of these groups",
            trueLabel: "is refused, with a message on the sign-in page",
            falseLabel: "is signed in with no role",
          },
          {
            kind: "select",
            name: "localSignIn",
            label: "Sign-in with a password",
            options: [
              { value: "everyone", label: "everyone with a local account" },
              { value: "operatorsOnly", label: "operators only (everyone else uses the identity provider)" },
            ],
            hint: "Operators keep the password sign-in as the way in when the identity provider is down.",
          },
        ],
      },
    },
  }),
} as const;
