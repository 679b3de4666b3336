/**
 * The operator pages settings live on, and what the Settings index says each is for. A setting's
 * definition names its page; the page renders the panels of every setting defined on it, in the
 * registry's order, and the index lists each page with the labels of its settings — so a new
 * setting appears on its page and in the index without an edit here.
 */
export const SETTING_PAGES = {
  "/operator/limits": "Limits and guests",
  "/operator/probes": "Qualification probes and the dispatch gate",
  "/operator/spend": "Spend: ceilings, fallback rates, machine and model spend, the ledger",
  "/operator/relay": "Model relay (and a test call)",
  "/operator/publication": "Publication",
  "/operator/repositories": "Target repositories",
  "/operator/users": "Users and sign-in",
} as const;

export type TSettingPage = keyof typeof SETTING_PAGES;
