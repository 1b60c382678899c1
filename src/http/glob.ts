// Path globs as used by cachePolicy, cors.paths, headers and jsonp.paths: pure, no I/O.

/** Translates a glob to an anchored RegExp: `*` within a segment, `**` across segments,
 *  `?` one character, `{a,b}` alternatives. A glob without `/` matches the file name. */
export function globToRegExp(glob: string): RegExp {
  const baseOnly = !glob.includes('/');
  let re = '';
  let inBraces = false;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        i++;
        if (glob[i + 1] === '/') {
          i++;
          re += '(?:.*/)?';
        } else re += '.*';
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '{') {
      inBraces = true;
      re += '(?:';
    } else if (c === '}' && inBraces) {
      inBraces = false;
      re += ')';
    } else if (c === ',' && inBraces) re += '|';
    else re += c.replace(/[.+^$()|[\]\\]/g, '\\$&');
  }
  if (baseOnly) return new RegExp(`(?:^|/)${re}$`);
  return new RegExp(`^${glob.startsWith('/') ? '' : '/'}${re}$`);
}
