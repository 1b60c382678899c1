// Mount paths: where an app mounted Gatehouse ('/static'), as the adapters and the transports'
// handshake listeners compare request targets with it. Pure string work.

/**
 * `url` below `mount` ('' is the root), the mount stripped; undefined outside it. Segment-wise:
 * '/static' covers '/static', '/static/a' and '/static?q', never '/statics'.
 */
export function belowMount(url: string, mount: string): string | undefined {
  if (mount === '') return url;
  if (!url.startsWith(mount)) return undefined;
  const c = url.charCodeAt(mount.length);
  if (Number.isNaN(c) || c === 0x3f) return `/${url.slice(mount.length)}`;
  return c === 0x2f ? url.slice(mount.length) : undefined;
}

/**
 * A mount path as given to an adapter ('/static', '/static/', '/', '' or undefined) in the form
 * belowMount takes: '' for the root, else no trailing slash. Throws on anything but an origin-form path.
 */
export function normalMount(mountPath: string | undefined, option = 'mountPath'): string {
  if (mountPath === undefined || mountPath === '') return '';
  // Not `//host` or `/\host`: the mount is put back on Locations, which must stay path-only.
  if (!mountPath.startsWith('/') || mountPath.startsWith('//') || /[?#\\\s]/.test(mountPath))
    throw new TypeError(`${option} must be a path such as "/app", not ${JSON.stringify(mountPath)}`);
  return mountPath.replace(/\/+$/, '');
}
