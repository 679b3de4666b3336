/**
 * Numbers as the diff view prints them ("12,345"). One shared Intl.NumberFormat: each
 * `Number#toLocaleString("en-US")` call builds a formatter of its own, and on a first render of a
 * big diff those calls were the largest single cost inside DiffView (measured in Chromium).
 */
const NUMBER_FORMAT = new Intl.NumberFormat("en-US");

export function formatNumber(value: number): string {
  return NUMBER_FORMAT.format(value);
}
