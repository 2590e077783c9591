/** The bus stores integer milliseconds and shows ISO 8601 UTC strings. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
