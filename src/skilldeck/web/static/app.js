// skilldeck web: the chat page. Speaks AG-UI 1.0 to POST agui (a RunAgentInput in,
// an event stream out) and reads small JSON endpoints under api/. Everything a model,
// a skill or a tool wrote is inserted as text (textContent) or, for Markdown, through
// marked + DOMPurify; no inline script anywhere (the server's CSP forbids it).

const $ = (sel) => document.querySelector(sel);
const el = (tag, cls, text) => {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
};

const state = {
  sessionId: null,
  running: false,
  controller: null,
  texts: new Map(),      // messageId -> {node, text}
  tools: new Map(),      // toolCallId -> card record
  subagents: new Map(),  // subagentRunId -> {card, log, status}
  interrupts: [],        // interrupts still to answer
  answers: new Map(),    // interruptId -> resume entry
  thinking: null,
  lastText: new Map(),   // subagentRunId -> its latest text (not repeated as its result)
};

// ---- small helpers ----------------------------------------------------------------

const escapeHtml = (s) => String(s).replace(/[&<>"']/g, (c) => (
  { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
let markedReady = false;

// Raw HTML a model writes inside its Markdown is shown as text (never parsed), and what
// Markdown itself produces still goes through DOMPurify before it touches the page.
function markdown(text) {
  if (window.marked && !markedReady) {
    window.marked.use({ renderer: { html: (token) => escapeHtml(typeof token === "string" ? token : token.text) } });
    markedReady = true;
  }
  const html = window.marked ? window.marked.parse(text, { gfm: true, breaks: false }) : null;
  const node = el("div", "md");
  if (html !== null && window.DOMPurify) {
    node.innerHTML = window.DOMPurify.sanitize(html, { USE_PROFILES: { html: true } });
  } else {
    node.textContent = text;
  }
  for (const a of node.querySelectorAll("a")) { a.target = "_blank"; a.rel = "noopener noreferrer"; }
  return node;
}

function scrollDown() {
  const log = $("#log");
  if (log.scrollHeight - log.scrollTop - log.clientHeight < 240) log.scrollTop = log.scrollHeight;
}

function containerFor(subagentRunId) {
  const sub = subagentRunId ? state.subagents.get(subagentRunId) : null;
  return sub ? sub.log : $("#log");
}

function append(node, subagentRunId) {
  $("#empty")?.remove();
  containerFor(subagentRunId).appendChild(node);
  scrollDown();
}

function notice(text, kind = "") { append(el("div", `notice ${kind}`, text)); }

function setStatus(status) {
  $("#status").textContent = status;
  $("#status-chip").className = `chip ${status}`;
}

function setRunning(running) {
  state.running = running;
  $("#send").hidden = running;
  $("#stop").hidden = !running;
  setStatus(running ? "running" : $("#status").textContent === "running" ? "idle" : $("#status").textContent);
}

function brief(name, input) {
  if (!input || typeof input !== "object") return "";
  if (name === "TodoWrite" && Array.isArray(input.todos)) {
    const done = input.todos.filter((t) => t.status === "completed").length;
    return `${input.todos.length} todos, ${done} done`;
  }
  if (name === "AskUserQuestion" && Array.isArray(input.questions)) {
    return input.questions.map((q) => q.question).join(" · ").slice(0, 140);
  }
  const key = ["command", "file_path", "path", "pattern", "url", "query", "description", "skill", "prompt"]
    .find((k) => typeof input[k] === "string");
  if (key) return input[key].split("\n")[0].slice(0, 140);
  return JSON.stringify(input).slice(0, 140);
}

function ago(seconds) {
  if (!seconds) return "";
  const delta = Math.max(0, Date.now() / 1000 - seconds);
  if (delta < 60) return "just now";
  if (delta < 3600) return `${Math.floor(delta / 60)} min ago`;
  if (delta < 86400) return `${Math.floor(delta / 3600)} h ago`;
  return new Date(seconds * 1000).toLocaleDateString();
}

function shortModel(model) {
  const m = String(model || "?");
  const cut = m.indexOf(":");
  if (cut < 0) return m;
  const rest = m.slice(cut + 1);
  return rest.includes("/") ? `${m.slice(0, cut)}:${rest.split("/").pop()}` : m;
}

function duration(ms) {
  if (ms === null || ms === undefined || ms < 0) return "";
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

async function api(path, options = {}) {
  const response = await fetch(path, { credentials: "same-origin", ...options });
  if (response.status === 401) { showAuthMissing(); throw new Error("not signed in"); }
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

function showAuthMissing() {
  if (!$("#log .auth")) {
    const node = $("#auth-missing").content.firstElementChild.cloneNode(true);
    node.classList.add("auth");
    append(node);
  }
}

// ---- the AG-UI stream -------------------------------------------------------------

async function readStream(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
      if (data) onEvent(JSON.parse(data));
    }
  }
}

async function stream(url, body) {
  state.controller?.abort();
  const controller = new AbortController();
  state.controller = controller;
  const options = body === undefined
    ? { signal: controller.signal, credentials: "same-origin" }
    : { method: "POST", signal: controller.signal, credentials: "same-origin",
        headers: { "Content-Type": "application/json", Accept: "text/event-stream" }, body: JSON.stringify(body) };
  try {
    const response = await fetch(url, options);
    if (response.status === 401) { showAuthMissing(); return; }
    if (!response.ok) { notice(`${response.status}: ${await response.text()}`, "error"); return; }
    await readStream(response, handle);
  } catch (e) {
    if (e.name !== "AbortError") notice(String(e), "error");
  } finally {
    const current = state.controller === controller;
    if (current) { state.controller = null; setRunning(false); }
    clearThinking();
    refreshSessions();
    // this tab's own run is over: follow the session's later runs (a reply or a message
    // from another tab) until this tab starts one again
    if (current && body !== undefined && state.sessionId) followSession(state.sessionId);
  }
}

function followSession(id) {
  stream(`api/sessions/${encodeURIComponent(id)}/events?follow=1&since=now`);
}

function runInput(extra) {
  return {
    threadId: state.sessionId || "",
    runId: crypto.randomUUID ? crypto.randomUUID() : String(Date.now()),
    protocolVersion: "1.0",
    state: {}, tools: [], context: [], forwardedProps: {},
    messages: [], ...extra,
  };
}

function send(text) {
  if (!text.trim() || state.running) return;
  const message = { id: `user-${Date.now()}`, role: "user", content: text };
  userMessage(text);
  setRunning(true);
  stream("agui", runInput({ messages: [message] }));
}

function resume(entries) {
  setRunning(true);
  stream("agui", runInput({ resume: entries }));
}

function clearThinking() { state.thinking?.remove(); state.thinking = null; }

const handlers = {
  RUN_STARTED(ev) {
    if (ev.threadId && ev.threadId !== state.sessionId) selectSession(ev.threadId, false);
    if (state.interrupts.length) answeredElsewhere();
    setRunning(true);
    setStatus("running");
  },
  TEXT_MESSAGE_START(ev) {
    clearThinking();
    const node = el("div", `msg ${ev.role === "user" ? "user" : "assistant"}`);
    const inner = ev.role === "user" ? el("div", "bubble") : markdown("");
    node.appendChild(inner);
    state.texts.set(ev.messageId, { node, inner, text: "", role: ev.role, queued: false, scope: ev.subagentRunId });
    append(node, ev.subagentRunId);
  },
  TEXT_MESSAGE_CONTENT(ev) {
    const t = state.texts.get(ev.messageId);
    if (!t) return;
    t.text += ev.delta;
    if (!t.queued) { t.queued = true; requestAnimationFrame(() => renderText(t)); }
  },
  TEXT_MESSAGE_END(ev) {
    const t = state.texts.get(ev.messageId);
    if (t) renderText(t);
  },
  TOOL_CALL_START(ev) { toolCard(ev); },
  TOOL_CALL_ARGS(ev) { const c = state.tools.get(ev.toolCallId); if (c) c.args += ev.delta; },
  TOOL_CALL_END(ev) { const c = state.tools.get(ev.toolCallId); if (c) showInput(c); },
  TOOL_CALL_RESULT(ev) { toolResult(ev); },
  STATE_SNAPSHOT(ev) { if (ev.snapshot && Array.isArray(ev.snapshot.todos)) renderTodos(ev.snapshot.todos); },
  SUBAGENT_STARTED(ev) { subagentCard(ev); },
  SUBAGENT_FINISHED(ev) { subagentEnd(ev.subagentRunId, "completed", ev.result); },
  SUBAGENT_ERROR(ev) { subagentEnd(ev.subagentRunId, ev.code || "error", ev.message); },
  CUSTOM(ev) { custom(ev); },
  RUN_FINISHED(ev) { runFinished(ev); setRunning(false); },
  RUN_ERROR(ev) {
    setRunning(false);
    clearThinking();
    notice(`The run failed: ${ev.message}`, "error");
    setStatus("error");
  },
};

function handle(ev) {
  const fn = handlers[ev.type];
  if (fn) fn(ev);
}

function renderText(t) {
  t.queued = false;
  if (t.scope) state.lastText.set(t.scope, t.text);
  if (t.role === "user") { t.inner.textContent = t.text; return; }
  const fresh = markdown(t.text);
  t.node.replaceChild(fresh, t.inner);
  t.inner = fresh;
  scrollDown();
}

function userMessage(text) {
  const node = el("div", "msg user");
  node.appendChild(el("div", "bubble", text));
  append(node);
}

// ---- tool cards --------------------------------------------------------------------

function toolCard(ev) {
  clearThinking();
  const card = el("details", "card tool");
  card.dataset.toolCallId = ev.toolCallId;
  const summary = el("summary");
  const name = el("span", "tool-name", ev.toolCallName);
  const briefNode = el("span", "tool-brief");
  const badge = el("span", "badge running", "running");
  const time = el("span", "duration");
  summary.append(name, briefNode, time, badge);
  const body = el("div", "card-body");
  card.append(summary, body);
  const record = { card, body, briefNode, badge, time, name: ev.toolCallName, args: "", input: null,
    started: Date.now(), subagentRunId: ev.subagentRunId };
  state.tools.set(ev.toolCallId, record);
  append(card, ev.subagentRunId);
}

const SPAWNING = new Set(["Task", "Agent"]);

// a block of a card: label + text; a Task's raw input and result fold away (its
// sub-agent card shows them better)
function block(c, label, text, cls) {
  const pre = el("pre", `code ${cls}`, text);
  if (!SPAWNING.has(c.name)) { c.body.append(el("div", "label", label), pre); return; }
  const raw = el("details", "raw");
  raw.append(el("summary", "label", label), pre);
  c.body.appendChild(raw);
}

function showInput(c) {
  try { c.input = JSON.parse(c.args || "{}"); } catch { c.input = c.args; }
  c.briefNode.textContent = brief(c.name, c.input);
  block(c, "Input", typeof c.input === "string" ? c.input : JSON.stringify(c.input, null, 2), "input");
}

function toolResult(ev) {
  const c = state.tools.get(ev.toolCallId);
  if (!c) return;
  const isError = Boolean(ev.metadata?.skilldeck?.isError);
  c.badge.className = `badge ${isError ? "error" : "ok"}`;
  c.badge.textContent = isError ? "error" : "done";
  c.card.classList.toggle("error", isError);
  c.time.textContent = duration(Date.now() - c.started);
  const content = typeof ev.content === "string" ? ev.content : JSON.stringify(ev.content, null, 2);
  block(c, isError ? "Error" : "Result", content, "result");
  if (isError) c.card.open = true;
}

function waitingOn(toolCallId, text) {
  const c = state.tools.get(toolCallId);
  if (!c) return;
  c.badge.className = "badge waiting";
  c.badge.textContent = text;
}

// ---- sub-agents --------------------------------------------------------------------

function subagentCard(ev) {
  const card = el("details", "card subagent");
  card.open = true;
  const summary = el("summary");
  const kind = el("span", "sub-kind", ev.name);
  const desc = el("span", "tool-brief", ev.description || "sub-agent");
  const badge = el("span", "badge running", "running");
  summary.append(el("span", "tool-name", "Sub-agent"), kind, desc, badge);
  const body = el("div", "card-body");
  const log = el("div", "sub-log");
  body.appendChild(log);
  card.append(summary, body);
  state.subagents.set(ev.subagentRunId, { card, body, log, badge });
  const parent = ev.parentToolCallId ? state.tools.get(ev.parentToolCallId) : null;
  if (parent) {
    parent.card.open = true;
    parent.body.insertBefore(card, parent.body.querySelector(".raw"));
    scrollDown();
  } else {
    append(card, null);
  }
}

function subagentEnd(runId, status, result) {
  const sub = state.subagents.get(runId);
  if (!sub) return;
  const ok = status === "completed";
  sub.badge.className = `badge ${ok ? "ok" : "error"}`;
  sub.badge.textContent = status;
  const said = [...sub.log.querySelectorAll(":scope > .msg.assistant")].pop();
  const repeated = said && state.lastText.get(runId) === String(result);
  if (result && !repeated) {
    sub.body.appendChild(el("div", "label", ok ? "Result" : "Why"));
    sub.body.appendChild(ok ? markdown(String(result)) : el("pre", "code result", String(result)));
  }
}

// ---- custom events, the end of a run, interrupts -------------------------------------

function custom(ev) {
  const v = ev.value || {};
  if (ev.name === "skilldeck.model_call" && !ev.subagentRunId) {
    clearThinking();
    state.thinking = el("div", "thinking", "Thinking");
    append(state.thinking);
  } else if (ev.name === "skilldeck.warning") {
    append(el("div", "notice warn", v.message), ev.subagentRunId);
  } else if (ev.name === "skilldeck.context_trimmed") {
    notice(`${v.omitted} earlier messages were left out of the model's context.`);
  } else if (ev.name === "skilldeck.done" && !ev.subagentRunId) {
    setStatus(v.status || "idle");
    if (v.status === "max_turns" || v.status === "limit") notice(`Stopped: ${v.reason || v.status}.`, "warn");
  }
}

function runFinished(ev) {
  clearThinking();
  const outcome = ev.outcome || { type: "success" };
  if (outcome.type === "cancelled") {
    for (const c of state.tools.values()) {
      if (c.badge.classList.contains("running")) { c.badge.className = "badge error"; c.badge.textContent = "stopped"; }
    }
    notice("Stopped.");
    setStatus("cancelled");
    return;
  }
  if (outcome.type !== "interrupt") return;
  setStatus("paused");
  state.interrupts = outcome.interrupts || [];
  state.answers = new Map();
  for (const it of state.interrupts) {
    if (it.reason === "question") questionCard(it);
    else waitingOn(it.toolCallId, "needs approval");
  }
  nextPermission();
}

function answerInterrupt(id, entry) {
  state.answers.set(id, { interruptId: id, ...entry });
  nextPermission();
  if (state.interrupts.every((it) => state.answers.has(it.id))) {
    const entries = state.interrupts.map((it) => state.answers.get(it.id));
    state.interrupts = [];
    resume(entries);
  }
}

// A run began while this tab still showed questions or approvals: another tab (or
// client) answered them, so they close here too.
function answeredElsewhere() {
  for (const it of state.interrupts) {
    if (!state.answers.has(it.id)) waitingOn(it.toolCallId, "answered elsewhere");
  }
  for (const card of document.querySelectorAll(".card.question:not(.answered)")) {
    card.classList.add("answered");
    for (const b of card.querySelectorAll("button, input")) b.disabled = true;
  }
  state.interrupts = [];
  state.answers = new Map();
  const dialog = $("#permission");
  if (dialog.open) dialog.close();
}

function nextPermission() {
  const dialog = $("#permission");
  const it = state.interrupts.find((i) => i.reason !== "question" && !state.answers.has(i.id));
  if (!it) { if (dialog.open) dialog.close(); return; }
  const details = it.metadata?.skilldeck || {};
  $("#perm-tool").textContent = details.tool || "this tool";
  $("#perm-reason").textContent = details.reason || "";
  $("#perm-input").textContent = JSON.stringify(details.input ?? {}, null, 2);
  dialog.dataset.interruptId = it.id;
  if (!dialog.open) dialog.showModal();
}

function permissionAnswer(kind) {
  const dialog = $("#permission");
  const id = dialog.dataset.interruptId;
  dialog.close();
  const approve = kind !== "deny";
  waitingOn(id, approve ? "approved" : "denied");
  answerInterrupt(id, { status: "resolved", payload: { approve, always: kind === "always" } });
}

function questionCard(it) {
  const details = it.metadata?.skilldeck || {};
  const questions = details.questions || [];
  const card = el("div", "card question");
  const answers = {};
  const finish = () => {
    if (questions.some((q) => !(q.question in answers))) return;
    card.classList.add("answered");
    for (const b of card.querySelectorAll("button, input")) b.disabled = true;
    const payload = questions.length === 1 ? { answer: answers[questions[0].question] } : { answers };
    waitingOn(it.toolCallId, "answered");
    answerInterrupt(it.id, { status: "resolved", payload });
  };
  for (const q of questions) card.appendChild(questionBlock(q, answers, finish));
  waitingOn(it.toolCallId, "needs an answer");
  append(card);
}

function questionBlock(q, answers, finish) {
  const block = el("div", "q");
  if (q.header) block.appendChild(el("div", "q-header", q.header));
  block.appendChild(el("h3", "", q.question));
  const options = el("div", "options");
  const chosen = new Set();
  for (const opt of q.options || []) {
    const label = typeof opt === "string" ? opt : opt.label;
    const button = el("button", "option", label);
    button.type = "button";
    if (opt.description) button.appendChild(el("small", "", opt.description));
    button.addEventListener("click", () => {
      if (!q.multiSelect) { button.classList.add("selected"); answers[q.question] = label; finish(); return; }
      chosen.has(label) ? chosen.delete(label) : chosen.add(label);
      button.classList.toggle("selected");
    });
    options.appendChild(button);
  }
  block.appendChild(options);
  const free = el("div", "q-free");
  const input = el("input");
  input.type = "text";
  input.placeholder = q.multiSelect ? "Other (optional)…" : "Or type an answer…";
  const submit = el("button", "primary", q.multiSelect ? "Submit" : "Answer");
  submit.type = "button";
  const done = () => {
    const typed = input.value.trim();
    if (typed) input.classList.add("selected");
    const picked = [...chosen, ...(typed ? [typed] : [])];
    if (!picked.length) return;
    answers[q.question] = q.multiSelect ? picked.join(", ") : typed;
    finish();
  };
  submit.addEventListener("click", done);
  input.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); done(); } });
  free.append(input, submit);
  block.appendChild(free);
  return block;
}

// ---- todos, sessions, skills ---------------------------------------------------------

function renderTodos(todos) {
  const list = $("#todos");
  list.replaceChildren();
  if (!todos.length) { list.appendChild(el("li", "muted", "No todos yet.")); return; }
  const icons = { completed: "✔", in_progress: "◐", pending: "○" };
  for (const t of todos) {
    const li = el("li", t.status);
    li.append(el("span", "t-icon", icons[t.status] || "○"),
      el("span", "", t.status === "in_progress" ? t.activeForm || t.content : t.content));
    list.appendChild(li);
  }
}

async function refreshSessions() {
  let data;
  try { data = await api("api/sessions"); } catch { return; }
  const list = $("#sessions");
  list.replaceChildren();
  if (!(data.sessions || []).length) list.appendChild(el("li", "s-none", "No sessions yet."));
  for (const s of data.sessions || []) {
    const li = el("li");
    li.dataset.sessionId = s.id;
    if (s.id === state.sessionId) li.classList.add("active");
    li.appendChild(el("span", "s-title", s.title || s.id));
    const meta = el("span", "s-meta");
    meta.append(el("span", `pill ${s.status}`, s.status), el("span", "", ago(s.updated)));
    if (s.id === state.sessionId) $("#session-title").textContent = s.title || s.id;
    li.appendChild(meta);
    if (s.status === "paused") {
      const resumeButton = el("button", "s-resume", "Resume");
      resumeButton.type = "button";
      resumeButton.addEventListener("click", (e) => { e.stopPropagation(); openSession(s.id); });
      li.insertBefore(resumeButton, meta);
    }
    li.addEventListener("click", () => openSession(s.id));
    list.appendChild(li);
  }
}

function resetLog() {
  state.texts.clear(); state.tools.clear(); state.subagents.clear(); state.lastText.clear();
  state.interrupts = []; state.answers = new Map();
  const log = $("#log");
  log.replaceChildren();
  renderTodos([]);
}

function selectSession(id, clear) {
  if (clear) resetLog();
  state.sessionId = id;
  $("#session-id").textContent = id || "";
  if (id) history.replaceState(null, "", `#session=${encodeURIComponent(id)}`);
  for (const li of document.querySelectorAll("#sessions li")) li.classList.toggle("active", li.dataset.sessionId === id);
}

function closeDrawers() { document.body.classList.remove("show-sidebar", "show-panel"); }

function toggleDrawer(name) {
  const open = !document.body.classList.contains(name);
  closeDrawers();
  document.body.classList.toggle(name, open);
}

async function openSession(id) {
  closeDrawers();
  state.controller?.abort();
  selectSession(id, true);
  $("#session-title").textContent = "…";
  try {
    const info = await api(`api/sessions/${encodeURIComponent(id)}`);
    $("#session-title").textContent = info.title || id;
    if (info.model) { $("#model").textContent = shortModel(info.model); $("#model").parentElement.title = `Model: ${info.model}`; }
    setStatus(info.status || "idle");
  } catch (e) { notice(String(e), "error"); return; }
  setRunning(true);
  // follow: the stream stays open and carries the session's later runs, e.g. the one a
  // reply from another tab resumes
  stream(`api/sessions/${encodeURIComponent(id)}/events?follow=1`);
}

function newSession() {
  closeDrawers();
  state.controller?.abort();
  selectSession(null, true);
  history.replaceState(null, "", location.pathname);
  $("#session-title").textContent = "New session";
  setStatus("idle");
  if (state.emptyView) $("#log").appendChild(state.emptyView.cloneNode(true));
  $("#input").focus();
}

let skillTimer = null;
async function searchSkills() {
  const q = $("#skill-search").value.trim();
  let data;
  try { data = await api(q ? `api/skills/match?q=${encodeURIComponent(q)}` : "api/skills"); } catch { return; }
  const list = $("#skills");
  list.replaceChildren();
  for (const s of data.skills || []) {
    const li = el("li");
    if (s.score !== undefined) li.appendChild(el("span", "k-score", Number(s.score).toFixed(2)));
    li.append(el("div", "k-name", s.name), el("div", "k-desc", s.description || ""));
    li.addEventListener("click", () => showSkill(s.name));
    list.appendChild(li);
  }
  if (!list.children.length) list.appendChild(el("li", "muted", q ? "No skill matches." : "No skills found."));
}

async function showSkill(name) {
  const box = $("#skill-detail");
  let s;
  try { s = await api(`api/skills/${encodeURIComponent(name)}`); } catch (e) { box.hidden = false; box.textContent = String(e); return; }
  box.replaceChildren();
  box.hidden = false;
  box.appendChild(el("h3", "", s.name));
  box.appendChild(el("p", "", s.description || ""));
  if (s.path) box.appendChild(el("div", "path", s.path));
  if (s.unavailable_reason) box.appendChild(el("div", "problem error", `Unavailable: ${s.unavailable_reason}`));
  const problems = s.problems || [];
  box.appendChild(el("div", "label", problems.length ? `${problems.length} problem(s)` : "No problems"));
  for (const p of problems) {
    box.appendChild(el("div", `problem ${p.severity === "error" ? "error" : ""}`, `${p.code ? p.code + ": " : ""}${p.message}`));
  }
}

// ---- wiring --------------------------------------------------------------------------

function wire() {
  const input = $("#input");
  $("#composer").addEventListener("submit", (e) => { e.preventDefault(); send(input.value); input.value = ""; grow(); });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); $("#composer").requestSubmit(); }
  });
  const grow = () => { input.style.height = "auto"; input.style.height = `${Math.min(input.scrollHeight, 200)}px`; };
  input.addEventListener("input", grow);
  $("#stop").addEventListener("click", async () => {
    if (!state.sessionId) { state.controller?.abort(); return; }
    try { await api(`api/sessions/${encodeURIComponent(state.sessionId)}/cancel`, { method: "POST" }); }
    catch (e) { notice(String(e), "error"); }
  });
  $("#new-session").addEventListener("click", newSession);
  $("#toggle-sidebar").addEventListener("click", () => toggleDrawer("show-sidebar"));
  $("#toggle-panel").addEventListener("click", () => toggleDrawer("show-panel"));
  $("#backdrop").addEventListener("click", closeDrawers);
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") closeDrawers(); });
  $("#refresh-sessions").addEventListener("click", refreshSessions);
  $("#perm-once").addEventListener("click", () => permissionAnswer("once"));
  $("#perm-always").addEventListener("click", () => permissionAnswer("always"));
  $("#perm-deny").addEventListener("click", () => permissionAnswer("deny"));
  $("#permission").addEventListener("cancel", (e) => e.preventDefault());
  for (const tab of document.querySelectorAll(".tab")) {
    tab.addEventListener("click", () => {
      for (const t of document.querySelectorAll(".tab")) t.classList.toggle("active", t === tab);
      $("#tab-todos").hidden = tab.dataset.tab !== "todos";
      $("#tab-skills").hidden = tab.dataset.tab !== "skills";
      if (tab.dataset.tab === "skills" && !$("#skills").children.length) searchSkills();
    });
  }
  $("#skill-search").addEventListener("input", () => { clearTimeout(skillTimer); skillTimer = setTimeout(searchSkills, 200); });
}

async function start() {
  state.emptyView = $("#empty").cloneNode(true);
  wire();
  try {
    const health = await api("api/health");
    $("#model").textContent = shortModel(health.model);
    $("#model").parentElement.title = `Model: ${health.model}`;
    $("#mode").textContent = health.permissionMode || "default";
  } catch { /* shown by api() */ }
  await refreshSessions();
  const match = location.hash.match(/session=([^&]+)/);
  if (match) openSession(decodeURIComponent(match[1]));
  $("#input").focus();
  document.body.dataset.ready = "1";
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
