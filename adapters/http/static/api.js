// Every call the pages (the chat and the dashboard) make to the HTTP API, the streamed ones
// too, goes through `api` and carries the API's bearer token (PARLEY_API_TOKEN). The token is
// asked for when the server answers 401 and kept in this browser under one key, so one token
// serves both pages; a server without one serves only its own machine and needs none. Each
// page has the form that asks (#auth, #auth-note, #token).

export const TOKEN_KEY = "parley.apiToken";

const authForm = document.getElementById("auth");
const tokenInput = document.getElementById("token");
let asking = null; // the open question, shared by every call refused while it is open

function askToken(note) {
  if (asking) return asking;
  document.getElementById("auth-note").textContent = note;
  authForm.hidden = false;
  tokenInput.value = "";
  tokenInput.focus();
  asking = new Promise((resolve) => {
    authForm.onsubmit = (e) => {
      e.preventDefault();
      const given = tokenInput.value.trim();
      if (!given) return;
      localStorage.setItem(TOKEN_KEY, given);
      authForm.hidden = true;
      asking = null;
      resolve();
    };
  });
  return asking;
}

// A 401 did nothing on the server: the token is asked for (again, if the kept one was
// refused) and the call is made once more.
export async function api(path, options = {}) {
  for (;;) {
    const token = localStorage.getItem(TOKEN_KEY);
    const headers = { ...(options.headers || {}) };
    if (token) headers["Authorization"] = "Bearer " + token;
    const response = await fetch(path, { ...options, headers });
    if (response.status !== 401) return response;
    if (localStorage.getItem(TOKEN_KEY) === token) { // else a newer token came meanwhile
      localStorage.removeItem(TOKEN_KEY);
      await askToken(token ? "That token was refused. Enter the server's PARLEY_API_TOKEN:"
        : "This server needs its access token. Enter its PARLEY_API_TOKEN:");
    }
  }
}

/** A JSON body sent with `api`. */
export function postJson(path, body, options = {}) {
  return api(path, {
    ...options,
    method: "POST",
    headers: { "Content-Type": "application/json", ...(options.headers || {}) },
    body: JSON.stringify(body),
  });
}

/** The `error` text of a refused call, whatever its body held. */
export async function refusal(response) {
  const body = await response.json().catch(() => ({}));
  return body.error || response.statusText || `HTTP ${response.status}`;
}

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** The JSON answer of a GET; any error throws with the server's own words. */
export async function getJson(path) {
  const response = await api(path, { headers: { Accept: "application/json" } });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new ApiError(response.status, body.error || response.statusText);
  return body;
}
