/**
 * A path relative to the snapshot root, or null when it would leave the root or is not written the one plain way
 * (no empty, `.` or `..` segment, no leading or trailing slash, no backslash or NUL). Pure, so that every host of
 * the snapshot code applies the same rule.
 */
export function safeRelPath(path: string): string | null {
  if (path === '' || path.includes('\0') || path.includes('\\')) return null;
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') return null;
  }
  return path;
}
