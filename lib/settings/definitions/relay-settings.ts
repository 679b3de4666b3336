/** The settings on Operator → Model relay: the pinned upstream and its price. */
import { DEFAULT_RELAY_PRICING, ZRelayPricingSettingSchema } from "../../contract/relay-pricing-setting";
import { ZRelayUpstreamSettingSchema } from "../../contract/relay-upstream-setting";
import { defineSetting } from "../define-setting";
import { bytesField } from "../setting-form-model";

const HTTP_UPSTREAM = { field: "kind", values: ["openai", "anthropic"] };

export const RELAY_SETTINGS = {
  "relay.upstream": defineSetting({
    schema: ZRelayUpstreamSettingSchema,
    default: null,
    label: "Model relay upstream",
    permission: "relay.manage",
    page: "/operator/relay",
    credentialFiles: (value) =>
      value.kind === "scripted" ? [] : [{ field: "credentialFile", file: value.credentialFile }],
    editor: {
      form: {
        fields: [
          {
            kind: "select",
            name: "kind",
            label: "Kind",
            options: [
              { value: "scripted", label: "scripted (canned answers, the demo)" },
              { value: "openai", label: "OpenAI-compatible chat completions" },
              { value: "anthropic", label: "Anthropic messages" },
            ],
          },
          {
            kind: "text",
            name: "scriptFile",
            label: "Script file (absolute path)",
            onlyWhen: { field: "kind", values: ["scripted"] },
          },
          {
            kind: "text",
            name: "endpoint",
            label: "Endpoint URL",
            placeholder: "https://api.example.com/v1/chat/completions",
            onlyWhen: HTTP_UPSTREAM,
          },
          { kind: "text", name: "model", label: "Model", onlyWhen: HTTP_UPSTREAM },
          {
            kind: "text",
            name: "credentialFile",
            label: "Credential file (absolute path)",
            hint: "The path of a file in DATA_DIR/credentials/ holding the key — never the key itself. Read at each call.",
            onlyWhen: HTTP_UPSTREAM,
          },
          { kind: "number", unit: "ms", name: "connectTimeoutMs", label: "Connect timeout", onlyWhen: HTTP_UPSTREAM },
          { kind: "number", unit: "ms", name: "requestTimeoutMs", label: "Request timeout", onlyWhen: HTTP_UPSTREAM },
          {
            kind: "number",
            unit: "count",
            name: "defaultMaxTokens",
            label: "Default max tokens",
            onlyWhen: HTTP_UPSTREAM,
          },
          {
            kind: "text",
            name: "anthropicVersion",
            label: "anthropic-version",
            onlyWhen: { field: "kind", values: ["anthropic"] },
          },
          bytesField("maxResponseBytes", "Upstream response size"),
        ],
      },
    },
  }),
  /** the pinned upstream's price per million input and output tokens: model spend, bounded like machine spend */
  "relay.pricing": defineSetting({
    schema: ZRelayPricingSettingSchema,
    default: DEFAULT_RELAY_PRICING,
    label: "Model price per million tokens",
    permission: "relay.manage",
    page: "/operator/relay",
    editor: {
      description:
        "Model spend is bounded like machine spend: each task's relay capability reserves its whole token budget (Limits → Relay tokens) at the higher of these two prices against the spend ceilings when it is issued, and settles to what its calls cost when it ends. Each capability keeps the price in force when it was issued.",
      form: {
        fields: [
          {
            kind: "dollars",
            name: "inputMicrosPerMTok",
            label: "Input tokens, per million",
            hint: "What the pinned upstream bills per million input (prompt) tokens, in US$: e.g. 3 for $3.00 / MTok. 0 = free (the scripted demo transport).",
          },
          {
            kind: "dollars",
            name: "outputMicrosPerMTok",
            label: "Output tokens, per million",
            hint: "Per million output (completion) tokens, in US$. A capability keeps the price it was issued under; its whole token budget at the higher price is reserved against the spend ceilings.",
          },
        ],
      },
    },
  }),
} as const;
