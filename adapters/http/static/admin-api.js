// The dashboard's calls to the API. They carry the bearer token (PARLEY_API_TOKEN), asked for
// when the server answers 401 and kept in this browser under the same key as the chat page's,
// so one token serves both pages. A server without a token serves only its own machine.

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
    authForm.onsubmit = (event) => {
      event.preventDefault();
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

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// The JSON answer of a GET; a 401 asks for the token and tries again, any other error
// throws with the server's own words.
export async function getJson(path) {
  for (;;) {
    const token = localStorage.getItem(TOKEN_KEY);
    const headers = { Accept: "application/json" };
    if (token) headers.Authorization = "Bearer " + token;
    const response = await fetch(path, { headers });
    if (response.status === 401) {
      if (localStorage.getItem(TOKEN_KEY) === token) { // else a newer token came meanwhile
        localStorage.removeItem(TOKEN_KEY);
        await askToken(token ? "That token was refused. Enter the server's PARLEY_API_TOKEN:"
          : "This server needs its access token. Enter its PARLEY_API_TOKEN:");
      }
      continue;
    }
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new ApiError(response.status, body.error || response.statusText);
    return body;
  }
}
