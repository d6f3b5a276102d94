// Sign in with the real pi's own AuthStorage (what its /login runs), pasting the
// redirect URL as a user would: argv[2] is pi's package, argv[3] auth.json, argv[4] the provider.
const [, , pkg, authPath, provider] = process.argv;
const { AuthStorage } = await import(`${pkg}/dist/core/auth-storage.js`);
const storage = AuthStorage.create ? AuthStorage.create(authPath) : new AuthStorage(authPath);
let link;
const linkReady = new Promise((resolve) => (link = resolve));
await storage.login(provider, {
  onAuth: (info) => link(info.url),
  onPrompt: async () => "",
  onProgress: () => {},
  onManualCodeInput: async () => {
    const url = await linkReady;
    const response = await fetch(url, { redirect: "manual" });
    return response.headers.get("location");
  },
});
console.log("signed in");
