/** The one way the kit shows a number anywhere but the form it was typed into. */

/**
 * "+15550100001" -> "•• 01" (a no-break space between): its last two digits, as people read a
 * number they know; enough for a user to recognise it, not to text it.
 */
export function maskDestination(destination: string): string {
  return `••\u00a0${destination.slice(-2)}`;
}
