/**
 * One spelling per number, without the number metadata: what the start limits key a number by and
 * what a stored number the metadata cannot read is texted as.
 */

/**
 * Separators people type ("+1 (555) 010-0001", "+1.555.010.0001") go, and the international "00"
 * prefix becomes "+". No country is guessed.
 */
export function normaliseDestination(destination: string): string {
  const compact = destination.trim().replace(/[\s\-.()/]/g, '');
  return compact.startsWith('00') ? `+${compact.slice(2)}` : compact;
}
