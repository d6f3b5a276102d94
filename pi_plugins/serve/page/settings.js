/* The settings view: the page's theme (kept in this browser), the defaults a new session
 * starts with and a provider key (the server's auth.json; the page never reads a key
 * back, it only learns whether one is stored). The defaults are those in effect in the
 * current session's folder, saved for the user (the agent dir's settings.json, as pi's
 * /settings saves them) or for that project (its .pi/settings.json, which wins there;
 * offered only in a trusted project). */

import { $, toast } from "./dom.js";

const THEME_KEY = "pi-theme";
let api;
let folder = () => null; // the current session's folder
let shown = null; // the last settings the server sent

/** Apply the theme kept in this browser (``system``, ``light`` or ``dark``). */
export function applyTheme(theme = localStorage.getItem(THEME_KEY) || "system") {
  const root = document.documentElement;
  if (theme === "system") delete root.dataset.theme; else root.dataset.theme = theme;
  const light = document.querySelector('link[href$="hljs-github.min.css"]');
  const dark = document.querySelector('link[href$="hljs-github-dark.min.css"]');
  light.media = theme === "system" ? "(prefers-color-scheme: light)" : theme === "light" ? "all" : "not all";
  dark.media = theme === "system" ? "not all and (prefers-color-scheme: light)" : theme === "dark" ? "all" : "not all";
}

export function initSettings(request, currentFolder) {
  api = request;
  folder = currentFolder;
  applyTheme();
  $("open-settings").addEventListener("click", openSettings);
  $("settings-close").addEventListener("click", closeSettings);
  $("settings-backdrop").addEventListener("click", (event) => { if (event.target.id === "settings-backdrop") closeSettings(); });
  $("set-theme").addEventListener("change", (event) => {
    localStorage.setItem(THEME_KEY, event.target.value);
    applyTheme(event.target.value);
  });
  $("settings").addEventListener("submit", (event) => { event.preventDefault(); save(); });
  $("settings-store-key").addEventListener("click", storeKey);
  $("set-scope").addEventListener("change", showScope);
}

function settingsPath() {
  const cwd = folder();
  return cwd ? `/api/settings?cwd=${encodeURIComponent(cwd)}` : "/api/settings";
}

export function settingsOpen() { return !$("settings-backdrop").hidden; }

export function closeSettings() {
  $("settings-backdrop").hidden = true;
  $("set-key").value = "";
  $("open-settings").focus();
}

function fill(select, values, chosen, blank) {
  select.replaceChildren();
  if (blank) select.appendChild(new Option(blank, ""));
  for (const value of values) select.appendChild(new Option(value, value));
  select.value = chosen || "";
}

/** Which file the defaults go to, and what the project file sets (it wins there). */
function showScope() {
  if (!shown) return;
  const project = $("set-scope").value === "project";
  const overrides = Object.keys(shown.project);
  let note = project ? `Saved in ${shown.projectFile}` : `Saved in ${shown.userFile}`;
  if (!project && overrides.length) note += ` · this project's ${shown.projectFile} sets ${overrides.join(", ")}, which wins here`;
  $("set-scope-file").textContent = note;
}

function show(data) {
  shown = data;
  const scope = $("set-scope");
  scope.options[1].disabled = !data.projectTrusted;
  scope.options[1].textContent = data.projectTrusted ? `this project (${data.cwd})` : "this project (not trusted)";
  if (!data.projectTrusted) scope.value = "user";
  showScope();
  const model = data.defaultProvider && data.defaultModel ? `${data.defaultProvider}/${data.defaultModel}` : "";
  fill($("set-model"), data.available.length ? data.available : data.models, model, "(unset)");
  $("set-thinking").value = data.defaultThinkingLevel || "";
  showKeys(data);
}

/** The key part alone (storing a key leaves unsaved choices above it as they are). */
function showKeys(data) {
  const provider = $("set-provider").value;
  fill($("set-provider"), data.providers.map((p) => p.name), provider || data.providers[0]?.name);
  const stored = data.providers.filter((p) => p.hasKey).map((p) => p.name);
  $("set-keys").textContent = stored.length ? `Keys stored for: ${stored.join(", ")}` : "No keys stored in auth.json.";
}

async function openSettings() {
  $("set-theme").value = localStorage.getItem(THEME_KEY) || "system";
  $("settings-backdrop").hidden = false;
  $("set-theme").focus();
  try { show(await api("GET", settingsPath())); } catch (error) { toast(`Settings: ${error.message}`, "error"); }
}

async function save() {
  const body = { scope: $("set-scope").value };
  if (shown?.cwd) body.cwd = shown.cwd;
  if ($("set-model").value) body.defaultModel = $("set-model").value;
  if ($("set-thinking").value) body.defaultThinkingLevel = $("set-thinking").value;
  try {
    show(await api("PUT", settingsPath(), body));
    toast("Settings saved");
    closeSettings();
  } catch (error) {
    toast(`Settings: ${error.message}`, "error");
  }
}

async function storeKey() {
  const provider = $("set-provider").value, key = $("set-key").value.trim();
  if (!provider || !key) { toast("Choose a provider and type its key", "warning"); return; }
  try {
    await api("PUT", `/api/providers/${encodeURIComponent(provider)}/key`, { key });
    $("set-key").value = "";
    showKeys(await api("GET", settingsPath()));
    toast(`Key stored for ${provider}`);
  } catch (error) {
    toast(`Key: ${error.message}`, "error");
  }
}
