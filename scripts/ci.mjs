// Whether this run is CI, decided in one place for scripts/run-tests.mjs and every test
// (test/helpers/ci.ts): CI set to anything but empty, 0 or false (CI=true, CI=1, CI=yes...).
// Under CI a missing binary (Chromium, nginx, redis-server, haproxy, pebble) fails its tests
// instead of leaving them out: .ci/run installs them all.

/** @param {Record<string, string | undefined>} [env] */
export function isCI(env = process.env) {
  return !['', '0', 'false'].includes((env.CI ?? '').trim().toLowerCase());
}
