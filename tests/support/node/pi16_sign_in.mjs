// Run one of pi 1.6's own sign-in flows (pi-ai's auth/oauth modules, what its /login and
// `pi auth login` run) as a user would: argv[2] is pi 1.6's package, argv[3] the flow's
// module (xai, kimi-coding, meta, openai-codex, openai-chatgpt, openrouter, radius),
// argv[4] the method to pick when asked (browser, device_code, device-code), argv[5] a
// device id. The browser follows the sign-in link (fetch follows the provider's redirect
// to pi's local callback). Prints the credentials pi would store, as JSON. With the
// method "refresh", argv[5] is a stored credential (JSON) to refresh instead.
import { existsSync } from "node:fs";

const [, , pkg, flow, method, deviceId] = process.argv;
// pi-ai sits beside pi's package when npm flattens node_modules, else inside it
const nested = `${pkg}/node_modules/@earendil-works/pi-ai`;
const piAi = existsSync(nested) ? nested : `${pkg}/../pi-ai`;
const oauth = await import(`${piAi}/dist/auth/oauth/${flow}.js`);
const provider = flow === "radius"
  ? oauth.createRadiusOAuth({ name: "Radius", gateway: "https://radius.pi.dev" })
  : Object.values(oauth).find((value) => value && typeof value.login === "function");
const controller = new AbortController();
const never = new Promise(() => {});
const interaction = {
  signal: controller.signal,
  prompt: async (prompt) => (prompt.type === "select" ? method : never),
  notify: (event) => {
    if (event.type === "auth_url") fetch(event.url).catch(() => {});
    if (event.type === "device_code") console.error(`device_code ${event.verificationUri} ${event.userCode}`);
  },
};
const credentials = method === "refresh"
  ? await provider.refresh(JSON.parse(deviceId), controller.signal)
  : await provider.login(interaction, { getDeviceId: () => deviceId });
console.log(JSON.stringify(credentials));
process.exit(0);
