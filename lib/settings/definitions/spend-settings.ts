/** The settings on Operator → Spend: the ceilings every create is reserved against, and the fallback rates. */
import { defineSetting } from "../define-setting";
import { ZSpendCeilingsSchema, ZSpendRatesSchema } from "../setting-schemas";

export const SPEND_SETTINGS = {
  // Monthly by default (a school's budget is monthly); the lifetime ceiling is a backstop.
  "spend.ceilings": defineSetting({
    schema: ZSpendCeilingsSchema,
    default: {
      globalMicros: 50_000_000,
      perTaskMicros: 500_000,
      monthlyGlobalMicros: 5_000_000,
      monthlyPerTaskMicros: null,
    },
    label: "Spend ceilings",
    permission: "spend.edit",
    page: "/operator/spend",
    editor: {
      description:
        "A create that would pass any ceiling is refused before it is sent. The month is the calendar month in UTC.",
      form: {
        fields: [
          {
            kind: "dollars",
            name: "monthlyGlobalMicros",
            label: "Per calendar month (UTC), all tasks",
            isNullable: true,
            hint: "Blank = no monthly ceiling. Rolls over by itself on the 1st.",
          },
          { kind: "dollars", name: "monthlyPerTaskMicros", label: "Per calendar month, one task", isNullable: true },
          { kind: "dollars", name: "globalMicros", label: "Lifetime, all tasks" },
          { kind: "dollars", name: "perTaskMicros", label: "Lifetime, one task (all its attempts)" },
        ],
      },
    },
  }),
  /** used when the provider's account does not state its rates; the higher of the two is used */
  "spend.rates": defineSetting({
    schema: ZSpendRatesSchema,
    default: { cpuHourMicros: 50_000, memoryGbHourMicros: 10_000 },
    label: "Fallback provider rates",
    permission: "spend.edit",
    page: "/operator/spend",
    editor: {
      form: {
        fields: [
          {
            kind: "dollars",
            name: "cpuHourMicros",
            label: "Per CPU-hour",
            hint: "Used when the provider's plan states no rate; the higher of the two is used.",
          },
          { kind: "dollars", name: "memoryGbHourMicros", label: "Per GB-hour of memory" },
        ],
      },
    },
  }),
} as const;
