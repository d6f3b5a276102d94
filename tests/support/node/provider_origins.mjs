// Loaded into the real pi with `node --import` so that it, like pi-harness, sends the
// requests for an origin named in PI_PROVIDER_ORIGINS to another one: pi has no such
// setting, and its sign-ins' URLs are fixed. Only the origin of fetch's URL changes;
// method, headers, path, query and body are pi's own. pi 1.6 puts a fetch of its own
// (undici's, for its proxy and idle-timeout settings) in globalThis.fetch at start-up:
// whatever fetch is put there is moved the same way.
const map = JSON.parse(process.env.PI_PROVIDER_ORIGINS || "{}");
const moving = (realFetch) => (input, init) => {
  const url = new URL(typeof input === "string" || input instanceof URL ? String(input) : input.url);
  const target = map[url.origin];
  if (!target) return realFetch(input, init);
  const moved = target + url.pathname + url.search;
  if (typeof input === "string" || input instanceof URL) return realFetch(moved, init);
  return realFetch(new Request(moved, input), init);
};
let current = moving(globalThis.fetch);
Object.defineProperty(globalThis, "fetch", {
  configurable: true,
  enumerable: true,
  get: () => current,
  set: (fetch) => { current = moving(fetch); },
});
