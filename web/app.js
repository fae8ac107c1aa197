// The viewer's entry: finds the server's mode, keeps who is viewing, and
// routes the hash links
//   #/inbox                               the viewer's conversations
//   #/conversations/{cid}                 a conversation at its newest page
//   #/conversations/{cid}/messages/{id}   a conversation around a message
// to the two screens.

import { onUnauthorized, probeMode, setToken, hasToken, get, path, query } from "./api.js";
import { h } from "./dom.js";
import { InboxScreen } from "./inbox.js";
import { ConversationScreen } from "./conversation.js";

const main = document.getElementById("main");
const who = document.getElementById("who");

// mode: "open" | "tokens"; user: the user id the API paths name ("me" with
// a token), or null in open mode until the person says who they view as;
// label: how the header names them.
export const session = { mode: null, user: null, label: null, inboxRows: new Map() };

const USER_ID = /^[A-Za-z0-9_.@-]{1,64}$/;

let screen = null;

function parseRoute(hash) {
  const parts = hash.replace(/^#\/?/, "").split("/").filter((p) => p !== "");
  if (parts[0] === "conversations" && parts.length >= 2) {
    let cid;
    try { cid = decodeURIComponent(parts[1]); } catch { return { name: "inbox" }; }
    const messageID = parts[2] === "messages" && /^\d+$/.test(parts[3] ?? "") ? Number(parts[3]) : null;
    return { name: "conversation", cid, messageID };
  }
  return { name: "inbox" };
}

function show(view) {
  screen?.destroy?.();
  screen = view;
  main.replaceChildren(view.element);
}

function renderWho() {
  who.replaceChildren();
  if (session.mode === "tokens" && hasToken()) {
    who.append(`Signed in as ${session.label}`, " ",
      h("button", { type: "button", class: "link", onclick: signOut }, "Sign out"));
  } else if (session.mode === "open") {
    who.append(session.user ? `Viewing as ${session.user}` : "Open mode", " ",
      h("button", { type: "button", class: "link", onclick: () => { location.hash = "#/inbox"; askViewAs(); } },
        session.user ? "Change" : "Choose user"));
  }
}

function route() {
  const target = parseRoute(location.hash);
  if (session.mode === "tokens" && !hasToken()) return showSignIn();
  renderWho();
  if (target.name === "conversation") {
    if (screen instanceof ConversationScreen && screen.cid === target.cid) {
      if (target.messageID !== null) screen.jumpTo(target.messageID);
      return;
    }
    show(new ConversationScreen({ session, cid: target.cid, messageID: target.messageID }));
  } else {
    document.title = "Inbox · Chat history";
    show(new InboxScreen({ session, onChooseUser: askViewAs }));
  }
}

// MARK: tokens mode

function signOut() {
  setToken(null);
  session.user = null;
  session.inboxRows.clear();
  screen?.destroy?.();
  screen = null;
  showSignIn();
}

function subjectOf(token) {
  try {
    const payload = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(payload)).sub ?? "you";
  } catch {
    return "you";
  }
}

function showSignIn(message = null) {
  screen?.destroy?.();
  screen = null;
  renderWho();
  const field = h("textarea", { id: "token", name: "token", rows: 4, autocomplete: "off", spellcheck: "false",
    required: true, "aria-describedby": "token-help" });
  const error = h("p", { class: "error", role: "alert" }, message ?? "");
  const form = h("form", { class: "card sign-in", onsubmit: async (event) => {
    event.preventDefault();
    const value = field.value.trim();
    if (!value) return;
    setToken(value);
    try {
      await get(path.inbox("me") + query({ limit: 1 }));
    } catch (failure) {
      setToken(null);
      error.textContent = failure.status === 401 ? `This token is refused: ${failure.message}` : failure.message;
      return;
    }
    field.value = "";
    session.user = "me";
    session.label = subjectOf(value);
    route();
  } },
  h("h1", {}, "Sign in"),
  h("label", { for: "token" }, "Access token"),
  field,
  h("p", { id: "token-help", class: "hint" },
    "The token your app's backend minted for you. It is kept in this page's memory only: ",
    "reloading or closing the page forgets it."),
  h("button", { type: "submit", class: "primary" }, "Sign in"),
  error);
  main.replaceChildren(form);
  field.focus();
}

// MARK: open mode

function askViewAs() {
  const field = h("input", { id: "view-as", name: "user", value: session.user ?? "", autocomplete: "off",
    pattern: "[A-Za-z0-9_.@\\-]{1,64}", required: true });
  const dialog = h("form", { class: "card view-as", onsubmit: (event) => {
    event.preventDefault();
    const value = field.value.trim();
    if (!USER_ID.test(value)) return;
    session.user = value;
    session.label = value;
    // Not a secret (open mode has none): kept for this tab only.
    sessionStorage.setItem("history-viewer-user", value);
    session.inboxRows.clear();
    route();
  } },
  h("h1", {}, "Who are you viewing as?"),
  h("p", { class: "hint" }, "The server is in open mode (no tokens): name the user whose inbox to show ",
    "and who sends what you write."),
  h("label", { for: "view-as" }, "User id"),
  field,
  h("button", { type: "submit", class: "primary" }, "View"));
  screen?.destroy?.();
  screen = null;
  main.replaceChildren(dialog);
  field.focus();
}

// MARK: start

// The skip link moves focus, not the hash (which is the app's route).
document.querySelector(".skip")?.addEventListener("click", (event) => {
  event.preventDefault();
  main.focus();
});

async function start() {
  try {
    session.mode = await probeMode();
  } catch (error) {
    main.replaceChildren(h("p", { class: "status error" }, `The server cannot be reached: ${error.message}. `),
      h("button", { type: "button", onclick: start }, "Try again"));
    return;
  }
  document.body.dataset.mode = session.mode;
  if (session.mode === "open") {
    const saved = sessionStorage.getItem("history-viewer-user");
    if (saved && USER_ID.test(saved)) { session.user = saved; session.label = saved; }
  }
  onUnauthorized((error) => {
    if (session.mode === "tokens" && session.user) {
      setToken(null);
      session.user = null;
      showSignIn(error.code === "token_expired" ? "Your token expired: sign in again." : `Signed out: ${error.message}`);
    }
  });
  window.addEventListener("hashchange", route);
  route();
}

start();
