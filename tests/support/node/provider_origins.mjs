// Loaded into the real pi with `node --import` so that it, like pi-harness, sends the
// requests for an origin named in PI_PROVIDER_ORIGINS to another one: pi has no such
// setting, and its sign-ins' URLs are fixed. Only the origin of fetch's URL changes;
// method, headers, path, query and body are pi's own.
const map = JSON.parse(process.env.PI_PROVIDER_ORIGINS || "{}");
const realFetch = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = new URL(typeof input === "string" || input instanceof URL ? String(input) : input.url);
  const target = map[url.origin];
  if (!target) return realFetch(input, init);
  const moved = target + url.pathname + url.search;
  if (typeof input === "string" || input instanceof URL) return realFetch(moved, init);
  return realFetch(new Request(moved, input), init);
};
