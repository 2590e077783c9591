/** A connection URL fit for messages and logs: the password, if any (the user part's, or a `password` parameter, which pg honours too), replaced by `***`. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    if (parsed.searchParams.has('password')) parsed.searchParams.set('password', '***');
    return parsed.toString();
  } catch {
    return '(a malformed database_url)';
  }
}
