/** A connection URL fit for messages and logs: the password, if any, replaced by `***`. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(a malformed database_url)';
  }
}
